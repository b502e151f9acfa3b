/* The MPI module (feroce-mpi.so, parallel_mpi_module.c): the few MPI calls of the simulator
 * over MPI, in a module of their own that parallel_mpi.c loads with dlopen when --mpi is given,
 * so that no other command and no user of the library loads libmpi. It knows nothing of the
 * simulator: plain collectives over MPI_COMM_WORLD on ints, uint64_t and bytes. The module and
 * the loader come from the same build; FE_SIM_MPI_MODULE_ABI guards against a stale one. */
#ifndef FE_SIM_PARALLEL_MPI_MODULE_H
#define FE_SIM_PARALLEL_MPI_MODULE_H

#include <stddef.h>
#include <stdint.h>

#define FE_SIM_MPI_MODULE_ABI    2
#define FE_SIM_MPI_MODULE_SYMBOL "fe_sim_mpi_module"
#define FE_SIM_MPI_MODULE_FILE   "feroce-mpi.so"

enum fe_sim_mpi_op { FE_SIM_MPI_SUM, FE_SIM_MPI_MIN, FE_SIM_MPI_MAX };

struct fe_sim_mpi_module {
    uint32_t abi; /* FE_SIM_MPI_MODULE_ABI */
    /* MPI_Init (unless done): 0 with the rank and size, or -1 with why */
    int (*init)(int *rank, int *size, char *why, size_t why_cap);
    void (*finalize)(void); /* unless not initialized or already finalized */
    /* all[size][each] from every rank's all[rank] (in place) */
    void (*allgather_u64)(uint64_t *all, int each);
    /* all[size] from every rank's mine */
    void (*allgather_int)(int mine, int *all);
    /* recv[j] = rank j's send[this rank] */
    void (*alltoall_int)(const int *send, int *recv);
    void (*alltoallv_bytes)(const void *send, const int *send_n, const int *send_off, void *recv,
                            const int *recv_n, const int *recv_off);
    void (*allgatherv_u64)(const uint64_t *send, int n, uint64_t *recv, const int *recv_n,
                           const int *recv_off);
    /* v[n] combined over the ranks by op, in place */
    void (*allreduce_u64)(uint64_t *v, int n, enum fe_sim_mpi_op op);
};

#endif

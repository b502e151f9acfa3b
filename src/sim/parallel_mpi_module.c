/* The MPI module (parallel_mpi_module.h): the only file linked with libmpi. */
#include <mpi.h>
#include <stdio.h>

#include "sim/parallel_mpi_module.h"

static int mod_init(int *rank, int *size, char *why, size_t why_cap)
{
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited && MPI_Init(NULL, NULL) != MPI_SUCCESS) {
        snprintf(why, why_cap, "MPI_Init failed");
        return -1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    return 0;
}

static void mod_finalize(void)
{
    int inited = 0, done = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&done);
    if (inited && !done) MPI_Finalize();
}

static void mod_allgather_u64(uint64_t *all, int each)
{
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, each, MPI_UINT64_T, MPI_COMM_WORLD);
}

static void mod_allgather_int(int mine, int *all)
{
    MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
}

static void mod_alltoall_int(const int *send, int *recv)
{
    MPI_Alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, MPI_COMM_WORLD);
}

static void mod_alltoallv_bytes(const void *send, const int *send_n, const int *send_off,
                                void *recv, const int *recv_n, const int *recv_off)
{
    MPI_Alltoallv(send, send_n, send_off, MPI_BYTE, recv, recv_n, recv_off, MPI_BYTE,
                  MPI_COMM_WORLD);
}

static void mod_allgatherv_u64(const uint64_t *send, int n, uint64_t *recv, const int *recv_n,
                               const int *recv_off)
{
    MPI_Allgatherv(send, n, MPI_UINT64_T, recv, recv_n, recv_off, MPI_UINT64_T, MPI_COMM_WORLD);
}

static void mod_allreduce_u64(uint64_t *v, int n, enum fe_sim_mpi_op op)
{
    MPI_Op o = op == FE_SIM_MPI_MIN ? MPI_MIN : op == FE_SIM_MPI_MAX ? MPI_MAX : MPI_SUM;
    MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_UINT64_T, o, MPI_COMM_WORLD);
}

/* The module's one exported symbol (the others are hidden: -fvisibility=hidden). */
__attribute__((visibility("default"))) extern const struct fe_sim_mpi_module fe_sim_mpi_module;
const struct fe_sim_mpi_module fe_sim_mpi_module = {
    .abi = FE_SIM_MPI_MODULE_ABI,
    .init = mod_init,
    .finalize = mod_finalize,
    .allgather_u64 = mod_allgather_u64,
    .allgather_int = mod_allgather_int,
    .alltoall_int = mod_alltoall_int,
    .alltoallv_bytes = mod_alltoallv_bytes,
    .allgatherv_u64 = mod_allgatherv_u64,
    .allreduce_u64 = mod_allreduce_u64,
};

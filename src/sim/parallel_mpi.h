/* The parallel simulation over MPI (parallel_mpi.c, docs/sim.md "Runs over MPI"): one process
 * per part, every process with the whole simulator built from the same inputs. The MPI calls
 * are in a module (feroce-mpi.so, parallel_mpi_module.h) that fe_sim_mpi_init loads: nothing
 * else loads libmpi. Without MPI at build time, or without the module, fe_sim_mpi_init says
 * so (FE_ENOTSUP). */
#ifndef FE_SIM_PARALLEL_MPI_H
#define FE_SIM_PARALLEL_MPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fe_sim;
struct fe_sim_partition;
struct fe_sim_par_info;

/* Whether this build has MPI. */
bool fe_sim_mpi_built(void);
/* The MPI module loaded and MPI_Init when started by mpirun: 0 with this process's rank and the
 * number of processes, or FE_ENOTSUP with why (no MPI in this build, not under mpirun, the
 * module missing or not loadable, MPI_Init failed). */
int fe_sim_mpi_init(int *rank, int *size, char *why, size_t why_cap);
void fe_sim_mpi_finalize(void);
/* Runs the simulator over MPI from its first run on: this process simulates the part whose
 * number is its rank, p->k must be the number of processes. 0, FE_ENOTSUP with why (every
 * process gets the same answer: the ranks agree on it, why naming the rank that failed), FE_ENOMEM.
 */
int fe_sim_set_mpi(struct fe_sim *sim, const struct fe_sim_partition *p, char *why, size_t why_cap);
/* After a run that failed (fe_sim_run < 0): the rank that failed first, with why (its reason,
 * where the run stopped); every rank has the same. -1 when no rank reported its failure. */
int fe_sim_mpi_failure(const struct fe_sim *sim, char *why, size_t why_cap);
/* What the run did, per part (as fe_sim_parallel_info). Collective: every process calls it. */
void fe_sim_mpi_info(const struct fe_sim *sim, struct fe_sim_par_info *out);

#endif

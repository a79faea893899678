/* cudaquality compute library: the process-wide pool of worker threads
 * that the CPU paths (sharpness, SSIM, the SF projector, several devices'
 * jobs) spread their work over, instead of creating threads per frame
 * (the upload staging copies keep their own helpers: cq-copy.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_POOL_H
#define CQ_POOL_H

#include <pthread.h>

#ifdef __cplusplus
extern "C"
{
#endif

typedef void (*CqPoolFunc) (void *user, unsigned index);

/* Runs func (user, i) for every i in [0, n) and returns when all have run.
 * The calling thread works on its own job too, the pool's helpers take
 * the indices it has not reached; jobs of several callers share the
 * helpers in the order they came. Index i prefers the same thread from job
 * to job (the caller for 0, helper i - 1 beyond), so that what a caller
 * keeps by index stays in one core's cache, but which thread runs an index
 * is not defined: func must not depend on it (results by index are). */
void cq_pool_run (unsigned n, CqPoolFunc func, void *user);

/* Threads one job can use: the helpers (one per online CPU but the
 * caller's) and the caller; 1 in a child of fork. */
unsigned cq_pool_threads (void);

/* How many parts to split work into: `requested`, or one per online CPU
 * for 0, at most `limit` and at least 1. */
unsigned cq_pool_split (unsigned requested, unsigned limit);

/* The helper threads of one pool (the worker pool, cq-copy.c's), started
 * on first use; CQ_HELPERS_INIT before. */
typedef struct
{
  pthread_mutex_t lock;
  int started;
  unsigned n;                   /* 0 in a child of fork: it has none */
} CqHelpers;

#define CQ_HELPERS_INIT { PTHREAD_MUTEX_INITIALIZER, 0, 0 }

/* Threads a job of the pool can use: the helpers and the caller. The first
 * call starts the helpers, detached, running helper_main ((void *) i) for
 * i = 0, 1, …: one for each online CPU but the caller's, at most max, and
 * none where after_fork_in_child (run in a child of fork) cannot be
 * registered; that calls cq_helpers_after_fork. */
unsigned cq_helpers_threads (CqHelpers * h, unsigned max,
    void *(*helper_main) (void *), void (*after_fork_in_child) (void));

/* In a child of fork: none of the helpers (and a lock perhaps inherited
 * held). */
void cq_helpers_after_fork (CqHelpers * h);

#ifdef __cplusplus
}
#endif
#endif /* CQ_POOL_H */

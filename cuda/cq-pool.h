/* cudaquality compute library: the process-wide pool of worker threads
 * that the CPU paths (sharpness, SSIM, the SF projector, several devices'
 * jobs) spread their work over, instead of creating threads per frame
 * (the upload staging copies keep their own helpers: cq-copy.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef CQ_POOL_H
#define CQ_POOL_H

#ifdef __cplusplus
extern "C"
{
#endif

typedef void (*CqPoolFunc) (void *user, unsigned index);

/* Runs func (user, i) for every i in [0, n) and returns when all have run.
 * The calling thread works on its own job too, the pool's helpers take
 * the indices it has not reached; jobs of several callers share the
 * helpers in the order they came. Which thread runs an index is not
 * defined: func must not depend on it (results by index are). */
void cq_pool_run (unsigned n, CqPoolFunc func, void *user);

/* Threads one job can use: the helpers (one per online CPU but the
 * caller's) and the caller; 1 in a child of fork. */
unsigned cq_pool_threads (void);

/* How many parts to split work into: `requested`, or one per online CPU
 * for 0, at most `limit` and at least 1. */
unsigned cq_pool_split (unsigned requested, unsigned limit);

/* Starts detached helper threads running helper_main ((void *) i) for
 * i = 0, 1, …: one for each online CPU but the caller's, at most max, and
 * none where after_fork_in_child (run in a child of fork, which has none
 * of them) cannot be registered. Returns how many started. The pool's
 * start, and that of cq-copy.c's own helpers. */
unsigned cq_helpers_start (unsigned max, void *(*helper_main) (void *),
    void (*after_fork_in_child) (void));

#ifdef __cplusplus
}
#endif
#endif /* CQ_POOL_H */

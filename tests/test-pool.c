/* CPU suite: cq_pool_run (the worker pool) runs every index of a job exactly
 * once, whatever thread claims it: jobs of 1 to 1000 indices (around the 64
 * that are claimed out of order by preference), several callers at once, a
 * job whose indices run jobs of their own, and a child of fork (no helpers
 * there). Prints how often an index ran on the thread it ran on in the
 * job before (the preference that keeps a band's scratch in one core's
 * cache); timing-dependent, so not asserted.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cq-pool.h"

#define MAX_N 1000

static int failures;

typedef struct
{
  unsigned n;
  unsigned runs[MAX_N];
  uint64_t value[MAX_N];
  pthread_t thread[MAX_N];
  unsigned nested;              /* indices of a job run by each index */
  unsigned work;                /* steps of busy work an index */
} Job;

static uint64_t
value_of (unsigned i)
{
  return 2654435761u * (uint64_t) i + 12345;
}

static void
nested_index (void *user, unsigned i)
{
  Job *job = user;

  __atomic_add_fetch (&job->runs[i], 1, __ATOMIC_RELAXED);
  job->value[i] = value_of (i);
}

static void
job_index (void *user, unsigned i)
{
  Job *job = user;

  __atomic_add_fetch (&job->runs[i], 1, __ATOMIC_RELAXED);
  job->value[i] = value_of (i);
  job->thread[i] = pthread_self ();
  if (job->work) {
    volatile uint64_t x = i;
    unsigned k;

    for (k = 0; k < job->work; k++)
      x = x * 6364136223846793005u + 1442695040888963407u;
  }
  if (job->nested) {
    Job *inner = calloc (1, sizeof *inner);
    unsigned k;

    inner->n = job->nested;
    cq_pool_run (inner->n, nested_index, inner);
    for (k = 0; k < inner->n; k++)
      if (inner->runs[k] != 1 || inner->value[k] != value_of (k))
        __atomic_add_fetch (&failures, 1, __ATOMIC_RELAXED);
    free (inner);
  }
}

/* Runs a job of n indices; returns 0 when each ran once with its value. */
static int
run_and_check (Job * job, unsigned n, unsigned nested, const char *what)
{
  unsigned i;

  memset (job->runs, 0, sizeof job->runs);
  memset (job->value, 0, sizeof job->value);
  job->n = n;
  job->nested = nested;
  job->work = 0;
  cq_pool_run (n, job_index, job);
  for (i = 0; i < n; i++)
    if (job->runs[i] != 1 || job->value[i] != value_of (i)) {
      fprintf (stderr, "FAIL: %s, job of %u: index %u ran %u times "
          "(value %llu, want %llu)\n", what, n, i, job->runs[i],
          (unsigned long long) job->value[i],
          (unsigned long long) value_of (i));
      return 1;
    }
  return 0;
}

static void *
caller_main (void *data)
{
  const unsigned seed = (unsigned) (size_t) data;
  Job *job = calloc (1, sizeof *job);
  unsigned k;

  for (k = 0; k < 300; k++) {
    unsigned n = 1 + (k * 37u + seed * 11u) % 130;

    if (run_and_check (job, n, 0, "several callers"))
      __atomic_add_fetch (&failures, 1, __ATOMIC_RELAXED);
  }
  free (job);
  return NULL;
}

int
main (void)
{
  static const unsigned sizes[] = { 1, 2, 3, 15, 16, 17, 63, 64, 65, 130,
    MAX_N
  };
  const unsigned threads = cq_pool_threads ();
  Job *job = calloc (1, sizeof *job);
  pthread_t prev[64], callers[4];
  unsigned s, k, i, same = 0, total = 0, jobs_n;
  pid_t pid;
  int status;

  printf ("pool: %u threads\n", threads);
  for (s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (k = 0; k < 50; k++)
      failures += run_and_check (job, sizes[s], 0, "one caller");

  /* a band per thread, job after job, each some 100 µs of work: the same
   * thread an index? */
  jobs_n = threads < 64 ? threads : 64;
  for (k = 0; k < 200; k++) {
    unsigned n;

    memset (job->runs, 0, sizeof job->runs);
    job->n = jobs_n;
    job->nested = 0;
    job->work = 100000;
    cq_pool_run (jobs_n, job_index, job);
    for (n = 0; n < jobs_n; n++)
      if (job->runs[n] != 1) {
        fprintf (stderr, "FAIL: bands, index %u ran %u times\n", n,
            job->runs[n]);
        failures++;
      }
    for (i = 0; k > 0 && i < jobs_n; i++) {
      same += pthread_equal (prev[i], job->thread[i]) != 0;
      total++;
    }
    memcpy (prev, job->thread, jobs_n * sizeof prev[0]);
  }
  if (total)
    printf ("jobs of %u indices: an index on the thread of the job before "
        "%u of %u times\n", jobs_n, same, total);

  for (k = 0; k < 4; k++)
    pthread_create (&callers[k], NULL, caller_main, (void *) (size_t) k);
  for (k = 0; k < 4; k++)
    pthread_join (callers[k], NULL);

  for (k = 0; k < 20; k++)
    failures += run_and_check (job, 1 + k % 9, 1 + k % 5, "nested jobs");

  pid = fork ();
  if (pid == 0) {
    int bad = 0;

    for (s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
      bad += run_and_check (job, sizes[s], 0, "child of fork");
    _exit (bad != 0 || cq_pool_threads () != 1);
  }
  if (pid < 0 || waitpid (pid, &status, 0) != pid || !WIFEXITED (status)
      || WEXITSTATUS (status) != 0) {
    fprintf (stderr, "FAIL: the child of fork\n");
    failures++;
  }
  free (job);
  if (failures) {
    fprintf (stderr, "%d failures\n", failures);
    return 1;
  }
  printf ("all jobs ran each index once\n");
  return 0;
}

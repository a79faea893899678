/* cudaquality compute library: the worker pool.
 *
 * A queue of jobs under one lock: a job is a function and a count of
 * indices; helpers and the job's caller claim its indices and the caller
 * waits until every claimed index has finished.
 *
 * Index i of a job prefers helper i - 1 (the caller takes index 0): the
 * CPU backends keep a band's scratch by index, so a band that runs on the
 * same core frame after frame finds it in that core's cache. A thread
 * whose preferred index is taken, or that has none, claims the lowest
 * unclaimed one, so a late helper only loses its index to another thread.
 * On the H200 host's 16-core Xeon, 1080p box8 in 16 bands took 2-12 %
 * less CPU time a frame than when any helper took the next index (the
 * median of each call's round-by-round ratios, 0.88 and 0.98, in two
 * calls; docs/benchmarks.md, forty-second session). Helpers are started
 * once and live as long as the process.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include "cq-pool.h"

/* the pool's helpers, at most */
#define MAX_HELPERS 63
/* jobs of up to this many indices claim out of order (a mask); larger ones
 * in order, from index 64 on */
#define MASK_INDICES 64

typedef struct CqPoolJob CqPoolJob;

struct CqPoolJob
{
  CqPoolFunc func;
  void *user;
  unsigned n, done;
  uint64_t unclaimed;           /* indices below MASK_INDICES, bit i */
  unsigned next;                /* the next index from MASK_INDICES on */
  CqPoolJob *link;              /* the next job with indices to claim */
};

/* A helper sleeps on its own condition, so that a job wakes the helpers
 * that prefer its indices, and beyond them the latest idle: on the 16-core
 * H100 host, eight 1 MiB copies of four parts took 480-600 µs waking
 * whichever of 15 helpers came next, 370-530 µs the latest idle. */
typedef struct
{
  pthread_cond_t wake;
  int woken;
} Helper;

static struct
{
  pthread_mutex_t lock;
  pthread_cond_t done;          /* a job's last index finished */
  CqPoolJob *jobs;              /* oldest first, each with indices left */
  CqHelpers helpers;
  Helper helper[MAX_HELPERS];
  unsigned idle[MAX_HELPERS];   /* idle helpers, the latest on top */
  unsigned n_idle;
} pool = {
  .lock = PTHREAD_MUTEX_INITIALIZER,.done = PTHREAD_COND_INITIALIZER,
  .helpers = CQ_HELPERS_INIT
};

/* Under the lock: takes job out of the queue (its indices are claimed). */
static void
dequeue (CqPoolJob * job)
{
  CqPoolJob **at;

  for (at = &pool.jobs; *at; at = &(*at)->link)
    if (*at == job) {
      *at = job->link;
      return;
    }
}

static int
fully_claimed (const CqPoolJob * job)
{
  return !job->unclaimed && job->next >= job->n;
}

/* Under the lock: an index of job for a thread that prefers `preferred`
 * (any value past the job's indices for none): that one if unclaimed, else
 * the lowest unclaimed. Dequeues a job fully claimed. */
static unsigned
claim (CqPoolJob * job, unsigned preferred)
{
  unsigned index;

  if (preferred < MASK_INDICES && (job->unclaimed >> preferred & 1))
    index = preferred;
  else if (job->unclaimed)
    index = (unsigned) __builtin_ctzll (job->unclaimed);
  else
    index = job->next++;
  if (index < MASK_INDICES)
    job->unclaimed &= ~((uint64_t) 1 << index);
  if (fully_claimed (job))
    dequeue (job);
  return index;
}

/* Runs one claimed index; called and returns with the lock held. */
static void
run_index (CqPoolJob * job, unsigned index)
{
  pthread_mutex_unlock (&pool.lock);
  job->func (job->user, index);
  pthread_mutex_lock (&pool.lock);
  if (++job->done == job->n)
    pthread_cond_broadcast (&pool.done);
}

static void *
helper_main (void *data)
{
  const unsigned index = (unsigned) (size_t) data;
  Helper *me = &pool.helper[index];

  /* before it goes idle, the only way to be woken */
  pthread_cond_init (&me->wake, NULL);
  pthread_mutex_lock (&pool.lock);
  for (;;) {
    CqPoolJob *job;

    while (!(job = pool.jobs)) {
      pool.idle[pool.n_idle++] = index;
      me->woken = 0;
      while (!me->woken)
        pthread_cond_wait (&me->wake, &pool.lock);
    }
    run_index (job, claim (job, index + 1));
  }
  return NULL;
}

/* Under the lock: wakes the helper in slot i of the idle stack, taking it
 * off the stack. */
static void
wake_idle (unsigned i)
{
  Helper *helper = &pool.helper[pool.idle[i]];

  for (; i + 1 < pool.n_idle; i++)
    pool.idle[i] = pool.idle[i + 1];
  pool.n_idle--;
  helper->woken = 1;
  pthread_cond_signal (&helper->wake);
}

/* Under the lock: wakes up to n idle helpers for a job of n + 1 indices or
 * more: those that prefer its indices 1 ... n first, then the latest idle
 * (their core still awake, their stack in cache). */
static void
wake_helpers (unsigned n)
{
  unsigned h, i, others = 0;

  for (h = 0; h < n; h++) {
    for (i = 0; i < pool.n_idle && pool.idle[i] != h; i++);
    if (i < pool.n_idle)
      wake_idle (i);
    else
      others++;
  }
  while (others-- > 0 && pool.n_idle > 0)
    wake_idle (pool.n_idle - 1);
}

/* A child of fork has none of the helpers (and may have inherited the lock
 * held): its jobs run on the calling thread. */
static void
pool_after_fork_in_child (void)
{
  pthread_mutex_init (&pool.lock, NULL);
  pthread_cond_init (&pool.done, NULL);
  pool.jobs = NULL;
  cq_helpers_after_fork (&pool.helpers);
  pool.n_idle = 0;
}

static unsigned
helpers_start (unsigned max, void *(*helper_main) (void *),
    void (*after_fork_in_child) (void))
{
  long cores = sysconf (_SC_NPROCESSORS_ONLN);
  unsigned want = cores > 1 ? (unsigned) (cores - 1) : 0, i;
  pthread_attr_t attr;

  if (want > max)
    want = max;
  if (pthread_atfork (NULL, NULL, after_fork_in_child) != 0)
    want = 0;
  pthread_attr_init (&attr);
  pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
  for (i = 0; i < want; i++) {
    pthread_t t;

    if (pthread_create (&t, &attr, helper_main, (void *) (size_t) i) != 0)
      break;
  }
  pthread_attr_destroy (&attr);
  return i;
}

unsigned
cq_helpers_threads (CqHelpers * h, unsigned max,
    void *(*helper_main) (void *), void (*after_fork_in_child) (void))
{
  /* the lock only until started: every job asks */
  if (!__atomic_load_n (&h->started, __ATOMIC_ACQUIRE)) {
    pthread_mutex_lock (&h->lock);
    if (!h->started) {
      h->n = helpers_start (max, helper_main, after_fork_in_child);
      __atomic_store_n (&h->started, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock (&h->lock);
  }
  return h->n + 1;
}

void
cq_helpers_after_fork (CqHelpers * h)
{
  pthread_mutex_init (&h->lock, NULL);
  h->started = 1;
  h->n = 0;
}

unsigned
cq_pool_threads (void)
{
  return cq_helpers_threads (&pool.helpers, MAX_HELPERS, helper_main,
      pool_after_fork_in_child);
}

unsigned
cq_pool_split (unsigned requested, unsigned limit)
{
  unsigned n = requested;

  if (n == 0) {
    long cores = sysconf (_SC_NPROCESSORS_ONLN);

    n = cores > 0 ? (unsigned) cores : 1;
  }
  if (n > limit)
    n = limit;
  return n > 0 ? n : 1;
}

void
cq_pool_run (unsigned n, CqPoolFunc func, void *user)
{
  CqPoolJob job = { func, user, n, 0,
    n >= MASK_INDICES ? ~(uint64_t) 0 : ((uint64_t) 1 << n) - 1,
    MASK_INDICES, NULL
  };
  CqPoolJob **tail;
  unsigned i;

  if (n <= 1 || cq_pool_threads () < 2) {
    for (i = 0; i < n; i++)
      func (user, i);
    return;
  }
  pthread_mutex_lock (&pool.lock);
  for (tail = &pool.jobs; *tail; tail = &(*tail)->link);
  *tail = &job;
  /* as many helpers as the job has indices beside the caller's, not all:
   * a broadcast woke every helper for a 4-part copy */
  wake_helpers (n - 1);
  while (!fully_claimed (&job))
    run_index (&job, claim (&job, 0));
  while (job.done < job.n)
    pthread_cond_wait (&pool.done, &pool.lock);
  pthread_mutex_unlock (&pool.lock);
}

/* probe_child.c: probes measured by another program, in a child process
 * that speaks tl's line protocol (protocol.c, README "Writing a probe").
 *
 * node: the real Node.js setTimeout, run by the script tl ships
 *   (probes/tl-node-probe.js, installed to share/tl/probes/).
 * browser: timers in a headless Chromium tab, driven by a Node.js script tl
 *   ships (probes/tl-browser-probe.js) over the DevTools protocol.
 * exec:CMD: any program, started with /bin/sh -c CMD.
 *
 * The child's first line says which version it speaks. Version 1: tl asks
 * for one sample at a time ("measure NS") and waits for the answer ("sample
 * NS"). Version 2: tl sends the plan once ("plan D1,D2 COUNT GAP") and the
 * child measures the delays in turn, arming each timer from the previous
 * callback the way a script timing itself does, and streams its samples
 * back in batches; the k-th sample belongs to the delay tl__run_next hands
 * out k-th, so the runner's interleaving, counts and warm-up still hold, and
 * tl stops a --duration run by closing the child's stdin. While the writer
 * cannot keep up, tl__run_next waits before taking the next sample read, so
 * tl stops reading and the child waits in its write, between its samples:
 * memory stays bounded and no sample is stretched. Either way the
 * child times its own timer with its own clock, and may report facts
 * ("fact KEY VALUE") that become session facts.
 *
 * The child runs in its own process group, with its stdin and stdout on
 * pipes. At the end tl closes the child's stdin (the child should exit), and
 * after a grace period kills the group; on a stop it kills the group at
 * once. Either way the child is reaped and every descriptor closed. A child
 * that exits or dies mid-run ends the run with an error; its sessions are
 * 'interrupted' and keep every sample received, a batch cut short
 * included. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect_internal.h"

enum {
  HELLO_TIMEOUT_MS = 15000, /* node can take a while to start on a busy host */
  ANSWER_SLACK_MS = 30000,  /* an answer later than delay + this is a hung child */
  SILENCE_SLACK_MS = 10000, /* version 2: no sample for 2 x (delay + gap) + this: hung */
  START_SLACK_MS = 50000,   /* and this more before the first sample (see silence_allowed) */
  EXIT_GRACE_MS = 2000,     /* to exit after its stdin closes, before SIGTERM */
  TERM_GRACE_MS = 1000,     /* after SIGTERM, before SIGKILL */
  BUF_MAX = TL__PROTOCOL_LINE_MAX + 2,
};

/* ======================================================================== */
/* Finding node and the script                                               */

int tl__child_locate(const char *probe, tl__child_paths *p, char *err, size_t errlen) {
  int browser = strcmp(probe, "browser") == 0;
  const char *name = browser ? "tl-browser-probe.js" : "tl-node-probe.js";
  p->browser[0] = '\0';
  if (!tl__find_in_path("node", p->node, sizeof p->node)) {
    snprintf(err, errlen,
             "--probe %s: 'node' was not found in PATH (install Node.js, e.g. apt-get install "
             "nodejs, or choose another probe)",
             probe);
    return TL_EUNAVAIL;
  }
  /* Installed: PREFIX/share/tl/probes; a tlcollect still in its build tree
   * reads the source tree (and only then: tl_data_path). */
  char rel[64];
  snprintf(rel, sizeof rel, "probes/%s", name);
  if (tl_data_path(rel, p->script, sizeof p->script) != TL_OK) {
    snprintf(err, errlen,
             "--probe %s: %s is missing next to tlcollect (../share/tl/probes/); "
             "reinstall tl",
             probe, name);
    return TL_EUNAVAIL;
  }
  static const char *const browsers[] = {"chromium", "chromium-browser", "google-chrome"};
  for (size_t i = 0; browser && !p->browser[0] && i < sizeof browsers / sizeof browsers[0]; i++)
    if (!tl__find_in_path(browsers[i], p->browser, sizeof p->browser))
      p->browser[0] = '\0';
  if (browser && !p->browser[0]) {
    snprintf(err, errlen,
             "--probe browser: no chromium, chromium-browser or google-chrome in PATH (install "
             "one, e.g. apt-get install chromium, or choose another probe)");
    return TL_EUNAVAIL;
  }
  return TL_OK;
}

/* ======================================================================== */
/* The child                                                                 */

typedef struct {
  char what[128]; /* "node probe", "exec probe 'CMD'" for messages */
  pid_t pid;
  int to, from; /* child's stdin (we write) and stdout (we read) */
  int wake[2];  /* self-pipe: a stop wakes the poll */
  char buf[BUF_MAX];
  size_t len;
  long lineno; /* lines read from the child so far */
  int eof;
  int timed_out;             /* the last next_msg ran out of time */
  int64_t samples;           /* answers received, warm-up included */
  int64_t version;           /* the protocol version of its hello */
  struct sigaction old_pipe; /* SIGPIPE's handling before the child started */
} child;

static void wake_pipe(void *arg) {
  int fd = *(int *)arg;
  char c = 1;
  ssize_t r = write(fd, &c, 1); /* async-signal-safe; a full pipe is awake already */
  (void)r;
}

static int cloexec_pipe(int fds[2]) {
  if (pipe(fds))
    return -1;
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  fcntl(fds[1], F_SETFD, FD_CLOEXEC);
  return 0;
}

static int spawn(child *c, char *const argv[], char *err, size_t errlen) {
  int in[2] = {-1, -1}, out[2] = {-1, -1};
  if (cloexec_pipe(in) || cloexec_pipe(out) || cloexec_pipe(c->wake)) {
    snprintf(err, errlen, "%s: cannot create pipes: %s", c->what, strerror(errno));
    goto fail_pipes;
  }
  fcntl(c->wake[0], F_SETFL, O_NONBLOCK);
  fcntl(c->wake[1], F_SETFL, O_NONBLOCK);
  c->pid = fork();
  if (c->pid < 0) {
    snprintf(err, errlen, "%s: cannot start: %s", c->what, strerror(errno));
    goto fail_pipes;
  }
  if (c->pid == 0) {
    /* Only async-signal-safe calls until exec: tl has other threads. */
    setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    dup2(in[0], 0);
    dup2(out[1], 1);
    execv(argv[0], argv);
    static const char msg[] = "tlcollect: error: cannot run the probe program\n";
    ssize_t r = write(2, msg, sizeof msg - 1);
    (void)r;
    _exit(127);
  }
  setpgid(c->pid, c->pid); /* also here, so a kill of the group cannot race the child */
  close(in[0]);
  close(out[1]);
  c->to = in[1];
  c->from = out[0];
  return TL_OK;

fail_pipes:
  for (int i = 0; i < 2; i++) {
    if (in[i] >= 0)
      close(in[i]);
    if (out[i] >= 0)
      close(out[i]);
    if (c->wake[i] >= 0)
      close(c->wake[i]);
    c->wake[i] = -1;
  }
  return TL_ESYS;
}

static int reaped(child *c, int *status, int wait_ms) {
  for (int waited = 0;; waited += 10) {
    pid_t r = waitpid(c->pid, status, WNOHANG);
    if (r == c->pid || (r < 0 && errno != EINTR))
      return 1;
    if (waited >= wait_ms)
      return 0;
    tl__os_sleep(0, 10000000);
  }
}

/* Ends the child: politely (stdin closed, time to exit) unless killing, then
 * SIGTERM and SIGKILL to its process group. Always reaps and closes. Returns
 * the wait status. */
static int finish(child *c, int kill_now) {
  int status = 0;
  if (c->to >= 0)
    close(c->to);
  c->to = -1;
  if (c->pid > 0) {
    if (kill_now || !reaped(c, &status, EXIT_GRACE_MS)) {
      kill(-c->pid, SIGTERM);
      if (!reaped(c, &status, TERM_GRACE_MS)) {
        kill(-c->pid, SIGKILL);
        reaped(c, &status, 60000);
      }
    }
    /* The shell of exec:CMD may leave children in the group: end them too. */
    kill(-c->pid, SIGKILL);
    c->pid = -1;
  }
  if (c->from >= 0)
    close(c->from);
  c->from = -1;
  for (int i = 0; i < 2; i++)
    if (c->wake[i] >= 0)
      close(c->wake[i]);
  c->wake[0] = c->wake[1] = -1;
  return status;
}

/* "fact KEY VALUE" becomes the session fact probe.KEY. */
static int record_fact(child *c, tl__run *run, const tl__msg *msg, char *err, size_t errlen) {
  char key[TL__PROTOCOL_FACT_KEY_MAX + 1], value[TL__PROTOCOL_FACT_VALUE_MAX + 1], evidence[160];
  snprintf(key, sizeof key, "%.*s", (int)msg->key_len, msg->key);
  snprintf(value, sizeof value, "%.*s", (int)msg->text_len, msg->text);
  snprintf(evidence, sizeof evidence, "reported by the %s", c->what);
  if (tl__run_fact(run, key, value, evidence) == TL_OK)
    return 0;
  snprintf(err, errlen, "%s: line %ld of its output: cannot keep the fact", c->what, c->lineno);
  return -1;
}

/* The next protocol message that is neither a comment nor a fact. Returns TL_OK, TL_EINTR
 * when the run is stopping, or an error in err (EOF: the child went away). */
static int next_msg(child *c, tl__run *run, int timeout_ms, tl__msg *msg, char *err,
                    size_t errlen) {
  int64_t deadline = tl__os_mono_ns() + (int64_t)timeout_ms * 1000000;
  for (;;) {
    char *nl = memchr(c->buf, '\n', c->len);
    if (nl) {
      size_t n = (size_t)(nl - c->buf);
      char why[TL_WHY_MAX];
      c->lineno++;
      int rc = tl__protocol_parse_line(c->buf, n, msg, why, sizeof why);
      if (rc) {
        snprintf(err, errlen, "%s: line %ld of its output: %s", c->what, c->lineno, why);
        return TL_EINVAL;
      }
      if (msg->kind == TL__MSG_ERROR) {
        /* The child's words go to a terminal: printable ASCII only. */
        char text[301];
        size_t k = msg->text_len < sizeof text - 1 ? msg->text_len : sizeof text - 1;
        for (size_t j = 0; j < k; j++)
          text[j] = msg->text[j] >= 0x20 && msg->text[j] < 0x7f ? msg->text[j] : '?';
        text[k] = '\0';
        snprintf(err, errlen, "%s reports an error: %s", c->what, text);
        return TL_EIO;
      }
      if (msg->kind == TL__MSG_FACT && record_fact(c, run, msg, err, errlen))
        return TL_EINVAL;
      memmove(c->buf, nl + 1, c->len - n - 1);
      c->len -= n + 1;
      if (msg->kind == TL__MSG_SKIP || msg->kind == TL__MSG_FACT)
        continue;
      return TL_OK;
    }
    if (c->len >= BUF_MAX - 1) {
      snprintf(err, errlen, "%s: line %ld of its output: line too long", c->what, c->lineno + 1);
      return TL_EINVAL;
    }
    if (c->eof) {
      snprintf(err, errlen, "%s: the program ended its output after %" PRId64 " samples", c->what,
               c->samples);
      return TL_EIO;
    }
    if (tl__run_stopping(run))
      return TL_EINTR;
    /* Rounded up: out of time only once the deadline has passed, which a
     * caller waiting for its own deadline relies on. */
    int64_t left = (deadline - tl__os_mono_ns() + 999999) / 1000000;
    if (left <= 0) {
      snprintf(err, errlen, "%s: no answer within %d s", c->what, timeout_ms / 1000);
      c->timed_out = 1;
      return TL_EIO;
    }
    struct pollfd pf[2] = {{c->from, POLLIN, 0}, {c->wake[0], POLLIN, 0}};
    int n = poll(pf, 2, left > 1000 ? 1000 : (int)left);
    if (n < 0 && errno != EINTR) {
      snprintf(err, errlen, "%s: poll: %s", c->what, strerror(errno));
      return TL_ESYS;
    }
    if (n > 0 && (pf[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t r = read(c->from, c->buf + c->len, BUF_MAX - 1 - c->len);
      if (r > 0)
        c->len += (size_t)r;
      else if (r == 0 || (errno != EINTR && errno != EAGAIN))
        c->eof = 1;
    }
  }
}

static int write_all(int fd, const char *s, size_t n) {
  while (n) {
    ssize_t w = write(fd, s, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return -1;
    s += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Appends how the child ended to the message in err. */
static void describe_exit(int status, char *err, size_t errlen) {
  size_t at = strlen(err);
  if (WIFEXITED(status))
    snprintf(err + at, errlen - at, " (it exited with status %d)", WEXITSTATUS(status));
  else if (WIFSIGNALED(status))
    snprintf(err + at, errlen - at, " (it was killed by signal %d)", WTERMSIG(status));
}

/* The answer to a request tl could not write: the child is gone, and what
 * it wrote last explains why. */
static int gone(child *c, tl__run *run, char *err, size_t errlen) {
  tl__msg msg;
  c->eof = 0;
  int rc = next_msg(c, run, 1000, &msg, err, errlen);
  if (rc == TL_OK)
    snprintf(err, errlen, "%s: the program stopped reading its input after %" PRId64 " samples",
             c->what, c->samples);
  return rc == TL_OK ? TL_EIO : rc;
}

static int clamp_ms(int64_t ms) { return ms > 0x7fffffff ? 0x7fffffff : (int)ms; }

/* Version 1: one "measure NS" request, one "sample NS" answer. */
static int measure_one_by_one(child *c, tl__run *run, char *err, size_t errlen) {
  const struct tl__run_view *v = tl__run_view(run);
  tl__msg msg;
  int i, rc = TL_OK;
  while (rc == TL_OK && (i = tl__run_next(run)) >= 0) {
    char line[64];
    int n = snprintf(line, sizeof line, "measure %" PRId64 "\n", v->delays_ns[i]);
    if (write_all(c->to, line, (size_t)n))
      return gone(c, run, err, errlen);
    rc = next_msg(c, run, clamp_ms(v->delays_ns[i] / 1000000 + ANSWER_SLACK_MS), &msg, err, errlen);
    if (rc == TL_OK && msg.kind != TL__MSG_SAMPLE) {
      snprintf(err, errlen, "%s: line %ld of its output: expected 'sample NS'", c->what, c->lineno);
      rc = TL_EINVAL;
    }
    if (rc == TL_OK) {
      c->samples++;
      tl__run_record_causes(run, i, msg.value, msg.runq_ns, msg.nivcsw, msg.migrated);
      if (v->opts->gap_ns > 0)
        tl__run_pause(run, v->opts->gap_ns);
    }
  }
  return rc;
}

static int64_t longest_delay(const struct tl__run_view *v) {
  int64_t longest = 0;
  for (size_t k = 0; k < v->delay_count; k++)
    longest = v->delays_ns[k] > longest ? v->delays_ns[k] : longest;
  return longest;
}

/* How long a version 2 child may send no sample before it counts as hung:
 * it writes its batches between samples, so twice its longest delay and gap
 * plus a generous SILENCE_SLACK_MS. TL_TEST_PROBE_SILENCE_MS (for tests)
 * replaces that slack, so that a test of a silent child takes a moment. */
static int64_t silence_allowed(const struct tl__run_view *v, int first) {
  /* Before its first sample a child may still be starting: a browser with a
   * fresh profile has taken more than 10 s on a busy machine. */
  int64_t slack_ms = SILENCE_SLACK_MS + (first ? START_SLACK_MS : 0);
  const char *test = getenv("TL_TEST_PROBE_SILENCE_MS");
  if (test && *test) {
    char *end;
    long long ms = strtoll(test, &end, 10);
    if (*end == '\0' && ms > 0 && ms <= SILENCE_SLACK_MS)
      slack_ms = ms;
  }
  return 2 * (longest_delay(v) + v->opts->gap_ns) + slack_ms * 1000000;
}

/* Version 2: the plan once, then samples as the child measures them. The
 * child cycles through the delays in the order tl__run_next hands them out,
 * so each sample is recorded against the delay tl__run_next names. */
static int measure_plan(child *c, tl__run *run, char *err, size_t errlen) {
  const struct tl__run_view *v = tl__run_view(run);
  const tl_collect_opts *o = v->opts;
  int64_t each = o->count > 0 ? o->count + o->warmup : 0; /* 0: until stdin closes */
  int64_t expected = each * (int64_t)v->delay_count;
  int64_t deadline = o->count > 0 ? 0 : tl__os_mono_ns() + o->duration_ns;
  char plan[TL__PROTOCOL_LINE_MAX + 2];
  int n = tl__protocol_plan(plan, sizeof plan, v->delays_ns, v->delay_count, each, o->gap_ns);
  if (n < 0) {
    snprintf(err, errlen, "%s: the plan does not fit in one protocol line", c->what);
    return TL_EINVAL;
  }
  if (write_all(c->to, plan, (size_t)n))
    return gone(c, run, err, errlen);
  int64_t silence_first = silence_allowed(v, 1), silence_next = silence_allowed(v, 0);
  int64_t heard = tl__os_mono_ns(); /* when the last sample (or the plan's sending) was */
  while (!expected || c->samples < expected) {
    int64_t now = tl__os_mono_ns();
    int64_t silence_ns = c->samples ? silence_next : silence_first;
    if (deadline && now >= deadline)
      return TL_OK; /* the duration is up: closing stdin stops the child */
    if (now - heard >= silence_ns) {
      snprintf(err, errlen,
               "%s: no sample for %.1f s after %" PRId64
               " samples, though the plan's longest delay is %.3f ms: the program seems hung "
               "(it was stopped; the samples received are kept)",
               c->what, (double)(now - heard) / 1e9, c->samples, (double)longest_delay(v) / 1e6);
      return TL_EIO;
    }
    int64_t until = heard + silence_ns;
    if (deadline && deadline < until)
      until = deadline;
    tl__msg msg;
    c->timed_out = 0;
    int rc = next_msg(c, run, clamp_ms((until - now) / 1000000 + 1), &msg, err, errlen);
    if (rc && c->timed_out)
      continue; /* the loop says which time ran out */
    if (rc)
      return rc;
    if (msg.kind != TL__MSG_SAMPLE) {
      snprintf(err, errlen, "%s: line %ld of its output: expected 'sample NS'", c->what, c->lineno);
      return TL_EINVAL;
    }
    int i = tl__run_next(run);
    if (i < 0)
      return TL_OK; /* stopping, or the duration is up: later samples are not kept */
    c->samples++;
    tl__run_record_causes(run, i, msg.value, msg.runq_ns, msg.nivcsw, msg.migrated);
    heard = tl__os_mono_ns();
  }
  return TL_OK;
}

/* ======================================================================== */
/* Start, run, end                                                           */

/* Starts the child and reads its hello, before the runner creates any
 * session: a child that cannot start leaves nothing behind. On success the
 * child is the run's probe state until tl__probe_child_run or
 * tl__probe_child_abandon ends it. */
static int start_child(tl__run *run, const char *what, char *const argv[], char *err,
                       size_t errlen) {
  child *c = calloc(1, sizeof *c);
  if (!c)
    return tl_fail(err, errlen, TL_ENOMEM, "%s: out of memory", what);
  snprintf(c->what, sizeof c->what, "%s", what);
  c->pid = -1;
  c->to = c->from = c->wake[0] = c->wake[1] = -1;
  /* A child that dies makes writes to its stdin fail with EPIPE instead of
   * killing tl with SIGPIPE. */
  struct sigaction ign;
  memset(&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  sigaction(SIGPIPE, &ign, &c->old_pipe);
  int rc = spawn(c, argv, err, errlen);
  if (rc) {
    sigaction(SIGPIPE, &c->old_pipe, NULL);
    free(c);
    return rc;
  }
  tl__run_set_wakeup(run, wake_pipe, &c->wake[1]);
  tl__msg msg;
  rc = next_msg(c, run, HELLO_TIMEOUT_MS, &msg, err, errlen);
  if (rc == TL_OK && msg.kind != TL__MSG_HELLO)
    rc = tl_fail(err, errlen, TL_EINVAL,
                 "%s: line %ld of its output: expected 'hello 1' or 'hello 2' first", c->what,
                 c->lineno);
  if (rc == TL_OK) {
    c->version = msg.value;
    tl__run_set_probe_state(run, c);
    return TL_OK;
  }
  tl__run_set_wakeup(run, NULL, NULL);
  int status = finish(c, !c->eof);
  sigaction(SIGPIPE, &c->old_pipe, NULL);
  if (rc == TL_EIO && c->eof) {
    snprintf(err, errlen, "%s did not start: it ended before its 'hello' line", c->what);
    describe_exit(status, err, errlen);
  }
  free(c);
  return rc;
}

int tl__probe_child_run(tl__run *run, char *err, size_t errlen) {
  child *c = tl__run_probe_state(run);
  tl__run_set_probe_state(run, NULL);
  int rc =
      c->version == 1 ? measure_one_by_one(c, run, err, errlen) : measure_plan(c, run, err, errlen);
  tl__run_set_wakeup(run, NULL, NULL);
  int stopping = rc == TL_EINTR || tl__run_stopping(run);
  int status = finish(c, stopping || rc != TL_OK);
  sigaction(SIGPIPE, &c->old_pipe, NULL);
  if (rc == TL_EIO && c->eof)
    describe_exit(status, err, errlen);
  free(c);
  return rc == TL_EINTR ? TL_OK : rc; /* the runner reports the stop */
}

void tl__probe_child_abandon(tl__run *run) {
  child *c = tl__run_probe_state(run);
  if (!c)
    return;
  tl__run_set_probe_state(run, NULL);
  tl__run_set_wakeup(run, NULL, NULL);
  finish(c, 1);
  sigaction(SIGPIPE, &c->old_pipe, NULL);
  free(c);
}

int tl__probe_node_start(tl__run *run, char *err, size_t errlen) {
  tl__child_paths p;
  int rc = tl__child_locate("node", &p, err, errlen);
  if (rc)
    return rc;
  char arm[64];
  snprintf(arm, sizeof arm, "--arm-from=%s", tl__run_view(run)->arm_from);
  char *argv[] = {p.node, p.script, arm, NULL};
  return start_child(run, "node probe", argv, err, errlen);
}

int tl__probe_browser_start(tl__run *run, char *err, size_t errlen) {
  tl__child_paths p;
  int rc = tl__child_locate("browser", &p, err, errlen);
  if (rc)
    return rc;
  char mode[64], chromium[4200];
  snprintf(mode, sizeof mode, "--mode=%s", tl__run_view(run)->browser_mode);
  snprintf(chromium, sizeof chromium, "--chromium=%s", p.browser);
  char *argv[] = {p.node, p.script, mode, chromium, NULL};
  return start_child(run, "browser probe", argv, err, errlen);
}

/* exec:CMD runs CMD through /bin/sh -c, with the arguments that name one of
 * tl's shipped probes resolved to it (tl__exec_command). Messages name the
 * command as given. */
int tl__probe_exec_start(tl__run *run, char *err, size_t errlen) {
  const char *cmd = tl__run_view(run)->opts->probe + strlen("exec:");
  tl__exec_resolved r;
  int rc = tl__exec_command(cmd, &r, err, errlen);
  if (rc)
    return rc;
  char what[128], sh[] = "/bin/sh", dash_c[] = "-c";
  snprintf(what, sizeof what, "exec probe '%.80s%s'", cmd, strlen(cmd) > 80 ? "..." : "");
  char *argv[] = {sh, dash_c, r.command, NULL};
  return start_child(run, what, argv, err, errlen);
}

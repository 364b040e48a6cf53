/* support.c: helpers shared by the tests (see support.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "support.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

char *tl_test_tmpdir(void) {
  const char *base = getenv("TMPDIR");
  char *t = malloc(4096);
  snprintf(t, 4096, "%s/tl-test-XXXXXX", base && *base ? base : "/tmp");
  if (!mkdtemp(t)) {
    free(t);
    return NULL;
  }
  return t;
}

int tl_test_setup(void **state) {
  tl_test_fixture *f = calloc(1, sizeof *f);
  if (!f)
    return -1;
  f->dir = tl_test_tmpdir();
  f->db = f->dir ? tl_test_path(f->dir, "tl.db") : NULL;
  *state = f;
  return f->db ? 0 : -1;
}

int tl_test_teardown(void **state) {
  tl_test_fixture *f = *state;
  if (!f)
    return 0;
  tl_test_rmdir(f->dir);
  free(f->dir);
  free(f->db);
  free(f);
  return 0;
}

void tl_test_rmdir(const char *path) {
  if (!path)
    return;
  pid_t pid = fork();
  if (pid == 0) {
    execlp("rm", "rm", "-rf", path, (char *)NULL);
    _exit(127);
  }
  int st;
  if (pid > 0)
    waitpid(pid, &st, 0);
}

char *tl_test_path(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);
  snprintf(p, n, "%s/%s", dir, name);
  return p;
}

int tl_test_entries(const char *dir) {
  DIR *d = opendir(dir);
  if (!d)
    return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
  closedir(d);
  return n;
}

static char *slurp_fd(int fd) {
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  for (;;) {
    if (len + 1 >= cap) {
      cap *= 2;
      buf = realloc(buf, cap);
    }
    ssize_t r = read(fd, buf + len, cap - len - 1);
    if (r <= 0)
      break;
    len += (size_t)r;
  }
  buf[len] = '\0';
  return buf;
}

int tl_test_run(char *const argv[], char *const env[], char **out, char **err) {
  return tl_test_run_with(argv, env, NULL, NULL, out, err);
}

int tl_test_run_with(char *const argv[], char *const env[], void (*prepare)(void *), void *arg,
                     char **out, char **err) {
  char outname[] = "/tmp/tl-out-XXXXXX", errname[] = "/tmp/tl-err-XXXXXX";
  int ofd = mkstemp(outname), efd = mkstemp(errname);
  unlink(outname);
  unlink(errname);
  pid_t pid = fork();
  if (pid == 0) {
    int in = open("/dev/null", O_RDONLY);
    dup2(in, 0);
    dup2(ofd, 1);
    dup2(efd, 2);
    for (size_t i = 0; env && env[i]; i++)
      putenv(env[i]);
    if (prepare)
      prepare(arg);
    execv(argv[0], argv);
    _exit(127);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  if (out) {
    lseek(ofd, 0, SEEK_SET);
    *out = slurp_fd(ofd);
  }
  if (err) {
    lseek(efd, 0, SEEK_SET);
    *err = slurp_fd(efd);
  }
  close(ofd);
  close(efd);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

pid_t tl_test_start(char *const argv[], const char *out_path) {
  pid_t pid = fork();
  if (pid == 0) {
    int in = open("/dev/null", O_RDONLY);
    int out =
        out_path ? open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644) : open("/dev/null", O_WRONLY);
    dup2(in, 0);
    dup2(out, 1);
    dup2(out, 2);
    execv(argv[0], argv);
    _exit(127);
  }
  return pid;
}

char *tl_test_read_file(const char *path, size_t *len) {
  int fd = open(path, O_RDONLY);
  if (fd < 0)
    return NULL;
  char *s = slurp_fd(fd);
  close(fd);
  if (len)
    *len = strlen(s);
  return s;
}

int tl_test_write_file(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return -1;
  size_t w = fwrite(data, 1, len, f);
  return fclose(f) == 0 && w == len ? 0 : -1;
}

int tl_test_copy_file(const char *from, const char *to) {
  FILE *in = fopen(from, "rb");
  if (!in)
    return -1;
  FILE *out = fopen(to, "wb");
  if (!out) {
    fclose(in);
    return -1;
  }
  char buf[65536];
  size_t n;
  int ok = 1;
  while ((n = fread(buf, 1, sizeof buf, in)) > 0)
    ok = ok && fwrite(buf, 1, n, out) == n;
  fclose(in);
  return fclose(out) == 0 && ok ? 0 : -1;
}

/* Written independently of the store's UTF-8 code, so that it can judge it. */
long tl_test_unsafe_at(const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  for (long i = 0; p[i];) {
    unsigned char c = p[i];
    if (c < 0x80) {
      if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
        return i;
      i++;
      continue;
    }
    int n = c >= 0xf0 && c <= 0xf4   ? 4
            : c >= 0xe0 && c <= 0xef ? 3
            : c >= 0xc2 && c <= 0xdf ? 2
                                     : 0;
    if (!n)
      return i;
    unsigned cp = c & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);
    for (int k = 1; k < n; k++) {
      if ((p[i + k] & 0xc0) != 0x80)
        return i;
      cp = cp << 6 | (p[i + k] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f))
      return i;
    i += n;
  }
  return -1;
}

int tl_test_one_line(const char *s) {
  const char *nl = s ? strchr(s, '\n') : NULL;
  return nl && nl != s && nl[1] == '\0';
}

const tl_test_creds *tl_test_unprivileged(void) {
  static const tl_test_creds nobody = {65534, 65534};
  return geteuid() == 0 ? &nobody : NULL;
}

void tl_test_drop_privileges(void *arg) {
  const tl_test_creds *c = arg;
  if (c && (setgroups(0, NULL) != 0 || setgid(c->gid) != 0 || setuid(c->uid) != 0))
    _exit(126);
}

char *tl_test_reachable_program(const char *dir, const char *program, const char *name) {
  char *to = tl_test_path(dir, name);
  if (chmod(dir, 0755) != 0 || tl_test_copy_file(program, to) != 0 || chmod(to, 0755) != 0) {
    free(to);
    return NULL;
  }
  return to;
}

int tl_test_has_row(const char *page, const char *label, const char *tail) {
  char head[256], end[256];
  snprintf(head, sizeof head, "\n| %s | ", label);
  snprintf(end, sizeof end, "| %s |\n", tail);
  for (const char *row = page; (row = strstr(row, head)); row++) {
    const char *eol = strchr(row + 1, '\n');
    size_t n = strlen(end);
    if (eol && (size_t)(eol + 1 - row) >= n && strncmp(eol + 1 - n, end, n) == 0)
      return 1;
  }
  return 0;
}

/* ======================================================================== */
/* Skipped cases                                                             */

/* cmocka counts a skipped case as passed and ctest sees only the program's
 * exit status, so the cases skipped here are collected, printed as one
 * summary line when the program ends, and appended to the file that
 * $TL_TEST_SKIP_LOG names (ctest sets it; the skipped_cases test reads
 * them all). */
static char skipped[4096];
static size_t skipped_len;
static int skipped_count;

static const char *program_name(void) {
  static char name[256];
  FILE *f = fopen("/proc/self/comm", "r");
  if (!f || !fgets(name, sizeof name, f))
    snprintf(name, sizeof name, "this test program");
  if (f)
    fclose(f);
  name[strcspn(name, "\n")] = '\0';
  return name;
}

static void say_skipped(void) {
  char line[4400];
  snprintf(line, sizeof line, "%s: %d case%s skipped: %s\n", program_name(), skipped_count,
           skipped_count == 1 ? "" : "s", skipped);
  fputs(line, stdout);
  fflush(stdout);
  const char *log = getenv("TL_TEST_SKIP_LOG");
  FILE *f = log && *log ? fopen(log, "a") : NULL;
  if (f) {
    fputs(line, f);
    fclose(f);
  }
}

/* A run starts with an empty log: skips of an earlier run are not this one's. */
__attribute__((constructor)) static void clear_skip_log(void) {
  const char *log = getenv("TL_TEST_SKIP_LOG");
  FILE *f = log && *log ? fopen(log, "w") : NULL;
  if (f)
    fclose(f);
}

void tl_test_note_skip(const char *test, const char *why) {
  printf("%s: skipped: %s\n", test, why);
  if (skipped_count++ == 0)
    atexit(say_skipped);
  int n = snprintf(skipped + skipped_len, sizeof skipped - skipped_len, "%s%s (%s)",
                   skipped_len ? "; " : "", test, why);
  if (n > 0 && skipped_len + (size_t)n < sizeof skipped)
    skipped_len += (size_t)n;
}

void tl_test_skip_case(const char *test, const char *why) {
  tl_test_note_skip(test, why);
  skip();
  abort(); /* not reached: skip() jumps back into cmocka */
}

/* ======================================================================== */
/* Reading JSON                                                              */

const char *tl_test_json_ws(const char *p) {
  while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
    p++;
  return p;
}

const char *tl_test_json_string(const char *p) {
  if (*p++ != '"')
    return NULL;
  while (*p != '"') {
    if ((unsigned char)*p < 0x20)
      return NULL;
    if (*p == '\\') {
      p++;
      if (*p == 'u') {
        for (int i = 1; i <= 4; i++)
          if (!isxdigit((unsigned char)p[i]))
            return NULL;
        p += 4;
      } else if (!*p || !strchr("\"\\/bfnrt", *p)) {
        return NULL;
      }
    }
    p++;
  }
  return p + 1;
}

const char *tl_test_json_value(const char *p, int depth) {
  p = tl_test_json_ws(p);
  if (depth > 64)
    return NULL;
  if (*p == '{' || *p == '[') {
    char close = *p == '{' ? '}' : ']';
    p = tl_test_json_ws(p + 1);
    if (*p == close)
      return p + 1;
    for (;;) {
      if (close == '}') {
        p = tl_test_json_string(tl_test_json_ws(p));
        if (!p || *(p = tl_test_json_ws(p)) != ':')
          return NULL;
        p++;
      }
      if (!(p = tl_test_json_value(p, depth + 1)))
        return NULL;
      p = tl_test_json_ws(p);
      if (*p == close)
        return p + 1;
      if (*p++ != ',')
        return NULL;
    }
  }
  if (*p == '"')
    return tl_test_json_string(p);
  if (strncmp(p, "true", 4) == 0 || strncmp(p, "null", 4) == 0)
    return p + 4;
  if (strncmp(p, "false", 5) == 0)
    return p + 5;
  const char *start = p;
  if (*p == '-')
    p++;
  if (!isdigit((unsigned char)*p))
    return NULL;
  if (*p == '0' && isdigit((unsigned char)p[1]))
    return NULL;
  while (isdigit((unsigned char)*p))
    p++;
  if (*p == '.') {
    p++;
    if (!isdigit((unsigned char)*p))
      return NULL;
    while (isdigit((unsigned char)*p))
      p++;
  }
  return p > start ? p : NULL;
}

/* The value of member key of the object at p, or NULL. */
const char *tl_test_json_member(const char *p, const char *key) {
  p = tl_test_json_ws(p);
  if (*p != '{')
    return NULL;
  p = tl_test_json_ws(p + 1);
  size_t kl = strlen(key);
  while (*p == '"') {
    const char *end = tl_test_json_string(p);
    if (!end)
      return NULL;
    int match = (size_t)(end - p) == kl + 2 && strncmp(p + 1, key, kl) == 0;
    p = tl_test_json_ws(tl_test_json_ws(end) + 1); /* past the colon */
    if (match)
      return p;
    if (!(p = tl_test_json_value(p, 1)))
      return NULL;
    p = tl_test_json_ws(p);
    if (*p == ',')
      p = tl_test_json_ws(p + 1);
  }
  return NULL;
}

/* Element i of the array at p, or NULL. */
const char *tl_test_json_element(const char *p, size_t i) {
  p = tl_test_json_ws(p);
  if (*p != '[' || *tl_test_json_ws(p + 1) == ']')
    return NULL;
  p = tl_test_json_ws(p + 1);
  for (size_t k = 0; k < i; k++) {
    if (!(p = tl_test_json_value(p, 1)) || *(p = tl_test_json_ws(p)) != ',')
      return NULL;
    p = tl_test_json_ws(p + 1);
  }
  return p;
}

size_t tl_test_json_count(const char *p) {
  size_t n = 0;
  while (tl_test_json_element(p, n))
    n++;
  return n;
}

int tl_test_json_valid(const char *s) {
  const char *end = tl_test_json_value(s, 0);
  return end && !*tl_test_json_ws(end);
}

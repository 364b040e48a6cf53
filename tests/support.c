/* support.c: helpers shared by the tests (see support.h). */
#include "support.h"

#include <fcntl.h>
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

/* replay.c: runs files through a fuzz target without libFuzzer, so that the
 * seed corpus and every crash kept as a regression run in the normal test
 * suite with any compiler. Arguments are files or folders (every regular
 * file in them). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "replay: cannot read %s\n", path);
    return 1;
  }
  size_t cap = 4096, len = 0;
  uint8_t *buf = malloc(cap);
  size_t r;
  while (buf && (r = fread(buf + len, 1, cap - len, f)) > 0) {
    len += r;
    if (len == cap)
      buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  if (!buf)
    return 1;
  /* An exact-size copy, so that ASan sees a read past the input. */
  uint8_t *exact = malloc(len ? len : 1);
  memcpy(exact, buf, len);
  free(buf);
  LLVMFuzzerTestOneInput(exact, len);
  free(exact);
  return 0;
}

int main(int argc, char **argv) {
  int bad = 0, files = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "replay: no such file or folder: %s\n", argv[i]);
      bad = 1;
      continue;
    }
    if (!S_ISDIR(st.st_mode)) {
      bad |= run_file(argv[i]);
      files++;
      continue;
    }
    DIR *d = opendir(argv[i]);
    struct dirent *e;
    while (d && (e = readdir(d))) {
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
      if (e->d_name[0] == '.' || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        continue;
      bad |= run_file(path);
      files++;
    }
    if (d)
      closedir(d);
  }
  printf("replay: %d inputs\n", files);
  return bad || files == 0; /* an empty corpus is a mistake too */
}

/* datapath_main.c: a tiny program for test_install: prints where
 * tl_data_path() finds argv[1] when run from wherever it was copied to, so
 * the test can check the lookup from an installed prefix and from the build
 * tree. Exit 0 found, 1 not found or refused. */
#include <stdio.h>

#include "tl_store.h"

int main(int argc, char **argv) {
  char path[4096];
  if (argc != 2)
    return 2;
  int err = tl_data_path(argv[1], path, sizeof path);
  if (err) {
    fprintf(stderr, "%s\n", tl_strerror(err));
    return 1;
  }
  printf("%s\n", path);
  return 0;
}

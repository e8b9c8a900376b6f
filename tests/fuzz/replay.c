/*
 * replay.c -- a standalone driver for the fuzz targets: runs
 * LLVMFuzzerTestOneInput once per file named on the command line (a
 * directory means every regular file in it).  Lets `make test` replay the
 * seed corpus and the kept crash inputs with any compiler, without
 * libFuzzer.  Exits 0 when every input ran (a failed invariant aborts).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return -1;
  }
  size_t cap = 1 << 16, len = 0;
  uint8_t *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
    len += got;
    if (len == cap) buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  if (!buf) return -1;
  /* an exact-size copy, so ASan sees reads past the input */
  uint8_t *exact = malloc(len ? len : 1);
  memcpy(exact, buf, len);
  free(buf);
  LLVMFuzzerTestOneInput(exact, len);
  free(exact);
  return 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
  long inputs = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      perror(argv[i]);
      return 2;
    }
    if (!S_ISDIR(st.st_mode)) {
      if (run_file(argv[i]) != 0) return 2;
      inputs++;
      continue;
    }
    DIR *d = opendir(argv[i]);
    if (!d) {
      perror(argv[i]);
      return 2;
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (e->d_name[0] == '.') continue;
      names = realloc(names, (n + 1) * sizeof *names);
      size_t len = strlen(argv[i]) + strlen(e->d_name) + 2;
      names[n] = malloc(len);
      snprintf(names[n], len, "%s/%s", argv[i], e->d_name);
      n++;
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, cmp_str);
    for (size_t k = 0; k < n; k++) {
      struct stat fs;
      if (stat(names[k], &fs) == 0 && S_ISREG(fs.st_mode)) {
        if (run_file(names[k]) != 0) return 2;
        inputs++;
      }
      free(names[k]);
    }
    free(names);
  }
  printf("replay: %ld inputs, no invariant failed\n", inputs);
  return 0;
}

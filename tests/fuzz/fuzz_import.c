/* fuzz_import.c: the importer's row and header parsers (tl__import_parse_line,
 * tl__import_parse_header). The first 4 bytes choose how to parse, readably:
 *   byte 0  'h' a CSV header line, 'j' a JSON-lines row, else a CSV row
 *   byte 1  unit of bare numbers: 'u' us, 'm' ms, 's' s, else ns
 *   byte 2  CSV column of the latency: the byte modulo 8 ('0'..'7')
 *   byte 3  ignored (a space in the seeds)
 * and the rest is the line, in a buffer of exactly its size. Promises: a row
 * is a sample (1), nothing (0: blank or comment) or TL_EINVAL with a reason;
 * a sample is in [0, 30 days] and reads back the same as a bare CSV number and
 * as {"latency_ns": N}; a bare integer gives what tl_store_import's shortcut
 * for bare integers computes; the same line always parses the same; an
 * accepted header names its latency column. */
#include <stdio.h>

#include "fuzz.h"
#include "store_internal.h"

#define MAX_NS (30LL * 86400 * 1000000000LL) /* import.c's limit */

static void header(const char *line, size_t len) {
  size_t column = 99, column2 = 98;
  int64_t unit = 0, unit2 = -1;
  char why[TL_WHY_MAX] = "";
  int rc = tl__import_parse_header(line, len, &column, &unit, why, sizeof why);
  TL_FUZZ_ASSERT(rc == TL_OK || rc == TL_EINVAL);
  if (rc != TL_OK) {
    TL_FUZZ_ASSERT(why[0]);
    return;
  }
  TL_FUZZ_ASSERT(tl__import_parse_header(line, len, &column2, &unit2, NULL, 0) == TL_OK);
  TL_FUZZ_ASSERT(column == column2 && unit == unit2);
  TL_FUZZ_ASSERT(unit == 1 || unit == 1000 || unit == 1000000);
  /* The named field: column fields in (a quoted field runs to its closing
   * quote, "" inside it being a quote, as RFC 4180 has it), then "latency_"
   * after blanks and a quote. */
  const char *p = line, *end = line + len;
  for (size_t i = 0; i < column; i++) {
    while (p < end && (*p == ' ' || *p == '\t'))
      p++;
    if (p < end && *p == '"') {
      for (p++; p < end; p++) {
        if (*p != '"')
          continue;
        if (p + 1 < end && p[1] == '"') {
          p++; /* a pair: one quote inside the field */
          continue;
        }
        p++; /* the closing quote */
        break;
      }
    }
    const char *comma = memchr(p, ',', (size_t)(end - p));
    TL_FUZZ_ASSERT(comma);
    p = comma + 1;
  }
  while (p < end && (*p == ' ' || *p == '\t' || *p == '"'))
    p++;
  TL_FUZZ_ASSERT(end - p >= 10 && memcmp(p, "latency_", 8) == 0);
}

static void row(tl_samples_format format, const char *line, size_t len, size_t column,
                int64_t unit) {
  int64_t v = -1, v2 = -2;
  char why[TL_WHY_MAX] = "";
  int rc = tl__import_parse_line(format, line, len, column, unit, &v, why, sizeof why);
  TL_FUZZ_ASSERT(rc == 1 || rc == 0 || rc == TL_EINVAL);
  TL_FUZZ_ASSERT(rc != TL_EINVAL || why[0]);
  int rc2 = tl__import_parse_line(format, line, len, column, unit, &v2, NULL, 0);
  TL_FUZZ_ASSERT(rc2 == rc && (rc != 1 || v2 == v));

  /* tl_store_import takes 1-15 bare digits in column 0 without the parser. */
  int digits = len > 0 && len < 16;
  int64_t bare = 0;
  for (size_t i = 0; digits && i < len; i++) {
    digits = line[i] >= '0' && line[i] <= '9';
    bare = bare * 10 + (line[i] - '0');
  }
  if (digits && column == 0 && bare <= MAX_NS / unit)
    TL_FUZZ_ASSERT(rc == 1 && v == bare * unit);

  if (rc != 1)
    return;
  TL_FUZZ_ASSERT(v >= 0 && v <= MAX_NS);
  char text[64];
  int n = snprintf(text, sizeof text, "%lld", (long long)v);
  TL_FUZZ_ASSERT(tl__import_parse_line(TL_SAMPLES_CSV, text, (size_t)n, 0, 1, &v2, NULL, 0) == 1);
  TL_FUZZ_ASSERT(v2 == v);
  n = snprintf(text, sizeof text, "{\"latency_ns\": %lld}", (long long)v);
  TL_FUZZ_ASSERT(tl__import_parse_line(TL_SAMPLES_JSONL, text, (size_t)n, 0, 1, &v2, NULL, 0) == 1);
  TL_FUZZ_ASSERT(v2 == v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 4)
    return 0;
  int64_t unit = data[1] == 'u' ? 1000 : data[1] == 'm' ? 1000000 : data[1] == 's' ? 1000000000 : 1;
  size_t column = data[2] % 8, len = size - 4;
  char *line = malloc(len ? len : 1);
  if (!line)
    abort();
  memcpy(line, data + 4, len);
  if (data[0] == 'h')
    header(line, len);
  else
    row(data[0] == 'j' ? TL_SAMPLES_JSONL : TL_SAMPLES_CSV, line, len, column, unit);
  free(line);
  return 0;
}

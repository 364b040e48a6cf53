/* export.c: raw samples out in standard text formats, so that any tool can
 * read tl data. Streams block by block: memory stays constant however many
 * samples are exported. Each line repeats its session's label, probe and
 * delay, so a file of many sessions can be split or filtered with ordinary
 * tools; the CSV header and JSON keys are the ones tlstore import reads. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

typedef struct {
  tl_store *s;
  FILE *out;
  char prefix[1024]; /* the part of each line before the latency */
  size_t prefix_len;
  const char *suffix;
  int64_t count;
  int64_t values[TL_BLOCK_MAX];
  char line[64 * 1024];
} exporter;

/* Appends s as a CSV field (quoted when it holds a comma, quote or newline)
 * or as a JSON string body (escaped). */
static void put_text(char *buf, size_t cap, size_t *at, const char *s, int json) {
  int quote = !json && strpbrk(s, ",\"\r\n") != NULL;
  if (quote && *at < cap)
    buf[(*at)++] = '"';
  for (; *s && *at + 8 < cap; s++) {
    unsigned char c = (unsigned char)*s;
    if (json && (c == '"' || c == '\\')) {
      buf[(*at)++] = '\\';
      buf[(*at)++] = (char)c;
    } else if (json && c < 0x20) {
      *at += (size_t)snprintf(buf + *at, cap - *at, "\\u%04x", c);
    } else if (quote && c == '"') {
      buf[(*at)++] = '"';
      buf[(*at)++] = '"';
    } else {
      buf[(*at)++] = (char)c;
    }
  }
  if (quote && *at < cap)
    buf[(*at)++] = '"';
}

static void put_raw(char *buf, size_t cap, size_t *at, const char *s) {
  size_t n = strlen(s);
  if (*at + n < cap) {
    memcpy(buf + *at, s, n);
    *at += n;
  }
}

/* Decimal digits of v at p; returns their count. */
static size_t put_u64(char *p, uint64_t v) {
  char tmp[24];
  size_t n = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  for (size_t i = 0; i < n; i++)
    p[i] = tmp[n - 1 - i];
  return n;
}

/* A write to out failed: remembered for tl_cli_finish, which names it. */
static int write_failed(exporter *e) {
  int why = errno;
  return tl__store_fail(e->s, tl_write_failed(e->out, why), "writing the export failed: %s",
                        strerror(why));
}

static int write_block(void *arg, const tl_block *b) {
  exporter *e = arg;
  const char *why;
  if (tl_block_decode(b, e->values, &why))
    return tl__block_fail(e->s, b, why);
  size_t slen = strlen(e->suffix), at = 0;
  for (int64_t i = 0; i < b->count; i++) {
    if (at + e->prefix_len + 24 + slen > sizeof e->line) {
      if (fwrite(e->line, 1, at, e->out) != at)
        return write_failed(e);
      at = 0;
    }
    memcpy(e->line + at, e->prefix, e->prefix_len);
    at += e->prefix_len;
    at += put_u64(e->line + at, (uint64_t)e->values[i]);
    memcpy(e->line + at, e->suffix, slen);
    at += slen;
  }
  e->count += b->count;
  if (fwrite(e->line, 1, at, e->out) != at)
    return write_failed(e);
  return TL_OK;
}

int tl_store_export(tl_store *s, const tl_filter *f, tl_samples_format format, FILE *out,
                    int64_t *count) {
  if (format == TL_SAMPLES_HGRM)
    return tl__write_hgrm(s, f, out);
  if (format != TL_SAMPLES_CSV && format != TL_SAMPLES_JSONL)
    return tl__store_fail(s, TL_EINVAL, "export writes csv, jsonl or hgrm");
  exporter *e = calloc(1, sizeof *e);
  if (!e)
    return tl__store_fail(s, TL_ENOMEM, "out of memory exporting");
  e->s = s;
  e->out = out;
  int json = format == TL_SAMPLES_JSONL;
  e->suffix = json ? "}\n" : "\n";
  /* One snapshot for the list and the samples, even while a collector
   * writes. */
  int err = tl_store_read_begin(s);
  tl_session_list list = {0};
  if (!err)
    err = tl_store_sessions(s, f, &list);
  if (!err && !json && fputs("label,probe,delay_ns,latency_ns\n", out) == EOF)
    err = tl__store_fail(s, TL_EIO, "writing the export failed");
  for (size_t i = 0; i < list.count && !err; i++) {
    const tl_session *x = &list.items[i];
    size_t at = 0, cap = sizeof e->prefix;
    char num[24];
    num[put_u64(num, (uint64_t)x->delay_ns)] = '\0';
    if (json) {
      put_raw(e->prefix, cap, &at, "{\"label\":\"");
      put_text(e->prefix, cap, &at, x->label, 1);
      put_raw(e->prefix, cap, &at, "\",\"probe\":\"");
      put_text(e->prefix, cap, &at, x->probe, 1);
      put_raw(e->prefix, cap, &at, "\",\"delay_ns\":");
      put_raw(e->prefix, cap, &at, num);
      put_raw(e->prefix, cap, &at, ",\"latency_ns\":");
    } else {
      put_text(e->prefix, cap, &at, x->label, 0);
      put_raw(e->prefix, cap, &at, ",");
      put_text(e->prefix, cap, &at, x->probe, 0);
      put_raw(e->prefix, cap, &at, ",");
      put_raw(e->prefix, cap, &at, num);
      put_raw(e->prefix, cap, &at, ",");
    }
    e->prefix_len = at;
    err = tl_store_scan_blocks(s, &x->id, 1, NULL, write_block, e);
  }
  tl_store_read_end(s);
  if (!err && ferror(out))
    err = tl__store_fail(s, TL_EIO, "writing the export failed");
  if (count)
    *count = e->count;
  tl_session_list_free(&list);
  free(e);
  return err;
}

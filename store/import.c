/* import.c: bringing in latencies measured by other tools (a Node.js script
 * that prints one latency per line, a CSV from a spreadsheet) as one new
 * session. The row parser is a pure function of one line, so it can be
 * fuzzed; the import streams the file through it in large chunks and writes
 * encoded blocks inside a single transaction, which it rolls back when a row
 * is bad (unless the caller asked to skip bad rows).
 *
 * Accepted shapes (see the README):
 *   CSV:   one number per line, or a header naming a column latency_ns,
 *          latency_us or latency_ms and rows with that column; blank lines
 *          and lines starting with '#' are ignored.
 *   JSONL: one JSON number per line, or one flat JSON object per line with a
 *          number under "latency_ns", "latency_us" or "latency_ms".
 * Numbers are non-negative, in nanoseconds unless a unit says otherwise
 * (--unit, the column name, or a suffix such as "1.25ms"). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sqlite_internal.h"

/* The largest latency accepted: 30 days, far beyond any timer, far below
 * where int64 arithmetic could overflow. */
#define IMPORT_MAX_NS (30LL * 86400 * 1000000000LL)
enum { LINE_MAX_BYTES = 4096, CHUNK = 1 << 20 };

void tl_import_opts_init(tl_import_opts *o) {
  memset(o, 0, sizeof *o);
  o->format = TL_SAMPLES_CSV;
  o->unit_ns = 1;
}

void tl_import_args_init(tl_import_args *a) {
  memset(a, 0, sizeof *a);
  tl_import_opts_init(&a->opts);
  a->opts.format = 0;
  a->opts.delay_ns = -1;
}

int tl_import_option(tl_import_args *a, const char *name, const char *v, char *why, size_t whylen) {
  tl_import_opts *o = &a->opts;
  if (strcmp(name, "format") == 0) {
    if (tl_samples_format_parse(v, &o->format) || o->format == TL_SAMPLES_HGRM)
      return tl_fail(why, whylen, TL_EINVAL, "must be csv or jsonl");
  } else if (strcmp(name, "label") == 0) {
    if (tl_label_check(v, why, whylen))
      return TL_EINVAL;
    o->label = v;
  } else if (strcmp(name, "probe") == 0) {
    if (tl_probe_name_check(v, why, whylen))
      return TL_EINVAL;
    o->probe = v;
  } else if (strcmp(name, "delay") == 0) {
    if (tl_delay_parse(v, &o->delay_ns, why, whylen))
      return TL_EINVAL;
  } else if (strcmp(name, "unit") == 0) {
    static const struct {
      const char *name;
      int64_t ns;
    } units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}};
    size_t i = 0;
    while (i < 3 && strcmp(v, units[i].name) != 0)
      i++;
    if (i == 3)
      return tl_fail(why, whylen, TL_EINVAL, "must be ns, us or ms");
    o->unit_ns = units[i].ns;
  } else if (strcmp(name, "host") == 0) {
    if (tl_host_name_check(v, why, whylen))
      return TL_EINVAL;
    o->hostname = v;
  } else if (strcmp(name, "start") == 0) {
    if (tl_date_parse(v, &o->started_ns, why, whylen))
      return TL_EINVAL;
  } else if (strcmp(name, "fact") == 0) {
    const tl_host_key *k;
    char value[TL_TAG_VALUE_MAX + 1];
    if (o->fact_count == TL_IMPORT_FACTS_MAX)
      return tl_fail(why, whylen, TL_EINVAL, "too many facts (at most %d)", TL_IMPORT_FACTS_MAX);
    if (tl_host_fact_parse(v, &k, value, sizeof value, why, whylen))
      return TL_EINVAL;
    for (size_t i = 0; i < o->fact_count; i++)
      if (strncmp(a->facts[i], v, strlen(k->name) + 1) == 0)
        return tl_fail(why, whylen, TL_EINVAL, "the same fact given twice");
    a->facts[o->fact_count++] = v;
    o->facts = a->facts;
  } else if (strcmp(name, "skip-bad") == 0) {
    o->skip_bad = 1;
  } else {
    return 0;
  }
  return 1;
}

const char *tl_import_missing(const tl_import_args *a, char *why, size_t whylen) {
  const tl_import_opts *o = &a->opts;
  const char *name = !o->format        ? "format"
                     : !o->label       ? "label"
                     : !o->probe       ? "probe"
                     : o->delay_ns < 0 ? "delay"
                                       : NULL;
  if (name)
    tl_fail(why, whylen, TL_EINVAL, "%s", o->format ? "missing" : "missing (csv or jsonl)");
  return name;
}

int tl_samples_format_parse(const char *s, tl_samples_format *out) {
  if (strcmp(s, "csv") == 0)
    *out = TL_SAMPLES_CSV;
  else if (strcmp(s, "jsonl") == 0)
    *out = TL_SAMPLES_JSONL;
  else if (strcmp(s, "hgrm") == 0)
    *out = TL_SAMPLES_HGRM;
  else
    return TL_EINVAL;
  return TL_OK;
}

static int bad(char *why, size_t whylen, const char *msg) {
  if (why && whylen)
    snprintf(why, whylen, "%s", msg);
  return TL_EINVAL;
}

/* ======================================================================== */
/* One value                                                                 */

/* A latency in [p, end): digits, maybe a fraction, maybe a unit suffix. */
static int parse_value(const char *p, const char *end, int64_t unit_ns, int64_t *out, char *why,
                       size_t whylen) {
  if (p == end)
    return bad(why, whylen, "empty value");
  if (*p == '-')
    return bad(why, whylen, "negative latency");
  /* The common case, plain digits, without a copy. */
  uint64_t v = 0;
  const char *q = p;
  while (q < end && *q >= '0' && *q <= '9' && v <= (uint64_t)IMPORT_MAX_NS)
    v = v * 10 + (uint64_t)(*q++ - '0');
  if (q == end) {
    if (v > (uint64_t)(IMPORT_MAX_NS / unit_ns))
      return bad(why, whylen, "latency is too large (more than 30 days)");
    *out = (int64_t)v * unit_ns;
    return TL_OK;
  }
  char buf[64];
  size_t n = (size_t)(end - p);
  if (n >= sizeof buf)
    return bad(why, whylen, "value is too long");
  memcpy(buf, p, n);
  buf[n] = '\0';
  char reason[TL_WHY_MAX];
  if (tl_duration_parse(buf, unit_ns, IMPORT_MAX_NS, out, reason, sizeof reason)) {
    if (why && whylen)
      snprintf(why, whylen, "not a latency: %s", reason);
    return TL_EINVAL;
  }
  if (unit_ns == 1 && !strpbrk(buf, "nsumhd") && strchr(buf, '.'))
    return bad(why, whylen, "fractional nanoseconds (use --unit us or ms for decimals)");
  return TL_OK;
}

static const char *trim_left(const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t'))
    p++;
  return p;
}

static const char *trim_right(const char *p, const char *end) {
  while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
    end--;
  return end;
}

/* ======================================================================== */
/* CSV                                                                       */

static int unit_of_name(const char *p, size_t n, int64_t *unit) {
  static const struct {
    const char *name;
    int64_t unit;
  } names[] = {{"latency_ns", 1}, {"latency_us", 1000}, {"latency_ms", 1000000}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strlen(names[i].name) == n && memcmp(names[i].name, p, n) == 0) {
      *unit = names[i].unit;
      return 1;
    }
  return 0;
}

/* One RFC 4180 field of [p, end): its text in [*a, *b) (inside the quotes
 * for a quoted field, where a doubled quote stands for one; blanks around
 * it trimmed), and *next after the comma that ends it, or NULL when it is
 * the last. A comma or newline inside quotes belongs to the field. -1 (why
 * set) for an unterminated quote or text after a closing one. */
static int csv_field(const char *p, const char *end, const char **a, const char **b,
                     const char **next, char *why, size_t whylen) {
  p = trim_left(p, end);
  const char *fe;
  if (p < end && *p == '"') {
    const char *q = p + 1;
    while (q < end && !(*q == '"' && (q + 1 == end || q[1] != '"')))
      q += *q == '"' ? 2 : 1;
    if (q >= end)
      return bad(why, whylen, "a quoted field has no closing quote");
    *a = p + 1;
    *b = q;
    fe = trim_left(q + 1, end);
    if (fe < end && *fe != ',')
      return bad(why, whylen, "text after a quoted field's closing quote");
  } else {
    fe = memchr(p, ',', (size_t)(end - p));
    fe = fe ? fe : end;
    *a = p;
    *b = trim_right(p, fe);
  }
  *next = fe < end && *fe == ',' ? fe + 1 : NULL;
  return TL_OK;
}

int tl__import_parse_header(const char *line, size_t len, size_t *column, int64_t *unit_ns,
                            char *why, size_t whylen) {
  const char *p = line, *end = trim_right(line, line + len);
  for (size_t col = 0; p; col++) {
    const char *a, *b;
    if (csv_field(p, end, &a, &b, &p, why, whylen))
      return TL_EINVAL;
    if (unit_of_name(a, (size_t)(b - a), unit_ns)) {
      *column = col;
      return TL_OK;
    }
  }
  return bad(why, whylen, "the header names no latency_ns, latency_us or latency_ms column");
}

static int parse_csv(const char *line, size_t len, size_t column, int64_t unit_ns, int64_t *out,
                     char *why, size_t whylen) {
  const char *p = line, *end = trim_right(line, line + len);
  if (trim_left(p, end) == end || *trim_left(p, end) == '#')
    return 0;
  const char *a = NULL, *b = NULL;
  for (size_t col = 0; col <= column; col++) {
    if (!p) {
      if (why && whylen)
        snprintf(why, whylen, "%zu fields, the latency is in field %zu", col, column + 1);
      return TL_EINVAL;
    }
    if (csv_field(p, end, &a, &b, &p, why, whylen))
      return TL_EINVAL;
  }
  int rc = parse_value(trim_left(a, b), trim_right(a, b), unit_ns, out, why, whylen);
  return rc == TL_OK ? 1 : rc;
}

/* ======================================================================== */
/* JSON lines                                                                */

/* A tiny JSON reader: enough to walk one object and find one number. */
static const char *json_ws(const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
    p++;
  return p;
}

/* A string starting at p ('"'); returns the position after it or NULL. */
static const char *json_string(const char *p, const char *end) {
  for (p++; p < end; p++) {
    if (*p == '"')
      return p + 1;
    if ((unsigned char)*p < 0x20)
      return NULL;
    if (*p == '\\') {
      if (++p == end)
        return NULL;
      if (*p == 'u') {
        for (int i = 0; i < 4; i++)
          if (++p == end || !isxdigit((unsigned char)*p))
            return NULL;
      } else if (!strchr("\"\\/bfnrt", *p)) {
        return NULL;
      }
    }
  }
  return NULL;
}

/* Any value; nesting is walked with a depth count. NULL when malformed. */
static const char *json_skip(const char *p, const char *end) {
  int depth = 0;
  do {
    p = json_ws(p, end);
    if (p == end)
      return NULL;
    if (*p == '"') {
      if (!(p = json_string(p, end)))
        return NULL;
    } else if (*p == '{' || *p == '[') {
      if (++depth > 64)
        return NULL;
      p++;
      continue;
    } else if (*p == '}' || *p == ']') {
      if (!depth)
        return NULL;
      depth--;
      p++;
    } else if (*p == ',' || *p == ':') {
      if (!depth)
        return NULL;
      p++;
      continue;
    } else {
      const char *s = p;
      while (p < end && (isalnum((unsigned char)*p) || *p == '-' || *p == '+' || *p == '.'))
        p++;
      if (p == s)
        return NULL;
    }
  } while (depth);
  return p;
}

/* A JSON number as a latency: no sign, no exponent. */
static int json_number(const char *p, const char *end, int64_t unit_ns, int64_t *out, char *why,
                       size_t whylen) {
  for (const char *q = p; q < end; q++)
    if (*q == 'e' || *q == 'E')
      return bad(why, whylen, "exponents are not accepted; write the number out");
  for (const char *q = p; q < end; q++)
    if (!isdigit((unsigned char)*q) && *q != '.' && *q != '-')
      return bad(why, whylen, "the latency is not a JSON number");
  return parse_value(p, end, unit_ns, out, why, whylen);
}

static int parse_jsonl(const char *line, size_t len, int64_t unit_ns, int64_t *out, char *why,
                       size_t whylen) {
  const char *end = line + len, *p = json_ws(line, end);
  if (p == end)
    return 0;
  if (*p != '{') {
    const char *e = trim_right(p, end);
    int rc = json_number(p, e, unit_ns, out, why, whylen);
    return rc == TL_OK ? 1 : rc;
  }
  p = json_ws(p + 1, end);
  int found = 0;
  if (p < end && *p == '}') {
    p++;
  } else {
    for (;;) {
      if (p == end || *p != '"')
        return bad(why, whylen, "expected a key in quotes");
      const char *k = p + 1, *ke = json_string(p, end);
      if (!ke)
        return bad(why, whylen, "malformed JSON string");
      p = json_ws(ke, end);
      if (p == end || *p != ':')
        return bad(why, whylen, "expected ':' after a key");
      p = json_ws(p + 1, end);
      int64_t unit;
      const char *v = p;
      if (!(p = json_skip(p, end)))
        return bad(why, whylen, "malformed JSON value");
      if (unit_of_name(k, (size_t)(ke - 1 - k), &unit)) {
        if (found)
          return bad(why, whylen, "more than one latency in the object");
        if (*v == '"' || *v == '{' || *v == '[' || *v == 'n' || *v == 't' || *v == 'f')
          return bad(why, whylen, "the latency is not a JSON number");
        if (json_number(v, p, unit, out, why, whylen))
          return TL_EINVAL;
        found = 1;
      }
      p = json_ws(p, end);
      if (p < end && *p == ',') {
        p = json_ws(p + 1, end);
        continue;
      }
      if (p < end && *p == '}') {
        p++;
        break;
      }
      return bad(why, whylen, "expected ',' or '}' in the object");
    }
  }
  if (json_ws(p, end) != end)
    return bad(why, whylen, "text after the JSON object");
  if (!found)
    return bad(why, whylen, "no \"latency_ns\", \"latency_us\" or \"latency_ms\" in the object");
  return 1;
}

int tl__import_parse_line(tl_samples_format format, const char *line, size_t len, size_t column,
                          int64_t unit_ns, int64_t *out_ns, char *why, size_t whylen) {
  if (unit_ns < 1)
    return bad(why, whylen, "bad unit");
  if (tl__utf8_valid_prefix((const unsigned char *)line, len) != len)
    return bad(why, whylen, "not valid UTF-8");
  if (memchr(line, '\0', len))
    return bad(why, whylen, "a NUL byte in the line");
  if (format == TL_SAMPLES_CSV)
    return parse_csv(line, len, column, unit_ns, out_ns, why, whylen);
  if (format == TL_SAMPLES_JSONL)
    return parse_jsonl(line, len, unit_ns, out_ns, why, whylen);
  return bad(why, whylen, "import reads csv or jsonl");
}

/* ======================================================================== */
/* The import                                                                */

typedef struct {
  tl_store *s;
  sqlite3_stmt *ins;
  tl__summarizer *z; /* every sample stored, for the session's summary */
  int64_t session_id, seq, stored;
  int64_t block[TL_BLOCK_MAX];
  size_t n;
  uint8_t enc[TL_BLOCK_HEADER + TL_BLOCK_MAX * 10];
} block_out;

static int flush_block(block_out *b) {
  if (!b->n)
    return TL_OK;
  int64_t lo, hi;
  size_t len = tl_block_encode_as(b->s->codec, b->block, b->n, b->seq, b->enc, &lo, &hi);
  sqlite3_bind_int64(b->ins, 1, b->session_id);
  sqlite3_bind_int64(b->ins, 2, b->seq++);
  sqlite3_bind_int64(b->ins, 3, (sqlite3_int64)b->n);
  sqlite3_bind_int64(b->ins, 4, lo);
  sqlite3_bind_int64(b->ins, 5, hi);
  sqlite3_bind_int(b->ins, 6, b->enc[1]);
  sqlite3_bind_blob(b->ins, 7, b->enc, (int)len, SQLITE_STATIC);
  int rc = sqlite3_step(b->ins);
  sqlite3_reset(b->ins);
  if (rc != SQLITE_DONE)
    return tl__store_sqlfail(b->s, rc, "storing imported samples");
  /* The import is one transaction: a sample stored is summarised now, while
   * its block is in the cache, and all goes if the import is rolled back. */
  tl__summary_add(b->z, b->block, b->n);
  b->stored += (int64_t)b->n;
  b->n = 0;
  return TL_OK;
}

/* The value of len (< 16) decimal digits, or 0 when p holds anything else. */
static int digits_value(const char *p, size_t len, int64_t *out) {
  int64_t v = 0;
  for (size_t i = 0; i < len; i++) {
    unsigned d = (unsigned)(unsigned char)p[i] - '0';
    if (d > 9)
      return 0;
    v = v * 10 + (int64_t)d;
  }
  *out = v;
  return 1;
}

/* ------------------------------------------------------------------------ */
/* The common line, read 8 bytes at a time                                   */

/* A word with a non-zero byte at each byte of w that is not an ASCII digit
 * (exact up to the first such byte; the carry of w + 6 only reaches the
 * bytes above one). */
static uint64_t non_digits(uint64_t w) {
  const uint64_t high = 0xF0F0F0F0F0F0F0F0u, threes = 0x3030303030303030u;
  return ((w & high) ^ threes) | (((w + 0x0606060606060606u) & high) ^ threes);
}

/* The value of the n (1..8) digits in the low bytes of w, the first one
 * most significant: padded to 8 with leading '0's, then added up in pairs,
 * fours and eights by multiplication (as simdjson parses 8 digits). */
static uint64_t digits8(uint64_t w, unsigned n) {
  if (n < 8)
    w = w << (8 * (8 - n)) | 0x3030303030303030u >> (8 * n);
  w -= 0x3030303030303030u;
  w = w * 10 + (w >> 8);
  return ((w & 0x000000FF000000FFu) * (100 + (1000000ull << 32)) +
          ((w >> 16) & 0x000000FF000000FFu) * (1 + (10000ull << 32))) >>
         32;
}

/* When the line at p is 1 to 16 digits and '\n': its value in *out and its
 * length with the '\n'; else 0. Reads the 16 bytes from p. */
static size_t digit_line(const char *p, uint64_t *out) {
  static const uint64_t pow10[8] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};
  uint64_t w = tl__load_le64(p), non = non_digits(w);
  if (non) {
    unsigned n = (unsigned)__builtin_ctzll(non) / 8;
    if (!n || p[n] != '\n')
      return 0;
    *out = digits8(w, n);
    return n + 1;
  }
  uint64_t w2 = tl__load_le64(p + 8), non2 = non_digits(w2);
  if (!non2)
    return 0; /* 17 digits or more: the general parser says what is wrong */
  unsigned n2 = (unsigned)__builtin_ctzll(non2) / 8;
  if (p[8 + n2] != '\n')
    return 0;
  *out = digits8(w, 8) * pow10[n2] + (n2 ? digits8(w2, n2) : 0);
  return 8 + n2 + 1;
}

static int exec(tl_store *s, const char *sql, const char *doing) {
  int rc = sqlite3_exec(tl__sqlite_db(s), sql, NULL, NULL, NULL);
  return rc == SQLITE_OK ? TL_OK : tl__store_sqlfail(s, rc, doing);
}

/* The tlstore import that makes this session again: every option that
 * shaped it, and the file by its name alone (a local folder means nothing
 * on another machine and may say more than its owner wants). */
static char *import_command_line(const tl_import_opts *o) {
  const char *argv[16 + 2 * TL_IMPORT_FACTS_MAX];
  char delay[32], start[32];
  int n = 0;
  argv[n++] = "tlstore";
  argv[n++] = "import";
  argv[n++] = "--format";
  argv[n++] = o->format == TL_SAMPLES_JSONL ? "jsonl" : "csv";
  argv[n++] = "--label";
  argv[n++] = o->label ? o->label : "";
  argv[n++] = "--probe";
  argv[n++] = o->probe ? o->probe : "";
  if (o->delay_ns % 1000000 == 0)
    snprintf(delay, sizeof delay, "%lldms", (long long)(o->delay_ns / 1000000));
  else if (o->delay_ns % 1000 == 0)
    snprintf(delay, sizeof delay, "%lldus", (long long)(o->delay_ns / 1000));
  else
    snprintf(delay, sizeof delay, "%lldns", (long long)o->delay_ns);
  argv[n++] = "--delay";
  argv[n++] = delay;
  if (o->unit_ns != 1) {
    argv[n++] = "--unit";
    argv[n++] = o->unit_ns == 1000 ? "us" : "ms";
  }
  if (o->hostname) {
    argv[n++] = "--host";
    argv[n++] = o->hostname;
  }
  if (o->started_ns > 0) {
    tl_date_format(o->started_ns, start, sizeof start);
    argv[n++] = "--start";
    argv[n++] = start;
  }
  for (size_t i = 0; i < o->fact_count && i < TL_IMPORT_FACTS_MAX; i++) {
    argv[n++] = "--fact";
    argv[n++] = o->facts[i];
  }
  if (o->skip_bad)
    argv[n++] = "--skip-bad";
  const char *file = o->source ? o->source : "-";
  const char *slash = strrchr(file, '/');
  argv[n++] = slash && slash[1] ? slash + 1 : file;
  return tl_command_line(n, argv);
}

int tl__sqlite_import(tl_store *s, FILE *in, const tl_import_opts *o, tl_bad_row_cb on_bad,
                      void *ctx, char uuid_out[37], int64_t *imported, int64_t *bad_rows) {
  if (s->readonly)
    return tl__store_fail(s, TL_EREADONLY, "%s is open read-only", s->path);
  if (o->format != TL_SAMPLES_CSV && o->format != TL_SAMPLES_JSONL)
    return tl__store_fail(s, TL_EINVAL, "import reads csv or jsonl");
  if (o->unit_ns < 1)
    return tl__store_fail(s, TL_EINVAL, "bad unit");
  char run_uuid[37], uuid[37];
  tl_uuid4(run_uuid);
  const char *host = o->hostname ? o->hostname : "imported";
  char fingerprint[300];
  snprintf(fingerprint, sizeof fingerprint, "imported:%s", host);
  if (o->fact_count > TL_IMPORT_FACTS_MAX)
    return tl__store_fail(s, TL_EINVAL, "too many host facts (at most %d)", TL_IMPORT_FACTS_MAX);
  tl_fact facts[TL_IMPORT_FACTS_MAX + 1];
  char values[TL_IMPORT_FACTS_MAX + 1][TL_TAG_VALUE_MAX + 1], why[TL_WHY_MAX];
  size_t nf = 0;
  for (size_t i = 0; i < o->fact_count; i++) {
    const tl_host_key *k;
    if (tl_host_fact_parse(o->facts[i], &k, values[nf], sizeof values[nf], why, sizeof why))
      return tl__store_fail(s, TL_EINVAL, "--fact: %s", why);
    for (size_t j = 0; j < nf; j++)
      if (strcmp(facts[j].key, k->fact) == 0)
        return tl__store_fail(s, TL_EINVAL, "--fact: %s given twice", k->name);
    facts[nf] = (tl_fact){k->fact, values[nf], "tlstore import --fact"};
    nf++;
  }
  if (o->hostname)
    facts[nf++] = (tl_fact){"hostname", o->hostname, "tlstore import --host"};
  char *cmd = import_command_line(o);
  if (!cmd)
    return tl__store_fail(s, TL_ENOMEM, "out of memory importing");
  tl_session_spec spec = {.run_uuid = run_uuid,
                          .label = o->label,
                          .probe = o->probe,
                          .delay_ns = o->delay_ns,
                          .command_line = cmd,
                          .host_fingerprint = fingerprint,
                          .hostname = host,
                          .libuv_version = "",
                          .facts = facts,
                          .fact_count = nf,
                          .started_ns = o->started_ns};
  block_out *b = calloc(1, sizeof *b);
  char *buf = malloc(CHUNK + 1);
  tl__summarizer *z = tl__summarizer_new();
  if (!b || !buf || !z) {
    free(b);
    free(buf);
    free(cmd);
    tl__summarizer_free(z);
    return tl__store_fail(s, TL_ENOMEM, "out of memory importing");
  }
  b->s = s;
  b->z = z;
  tl__summary_begin(z);
  int err = exec(s, "BEGIN IMMEDIATE", "starting the import");
  int in_txn = err == TL_OK;
  if (!err)
    err = tl__session_insert(s, &spec, uuid, &b->session_id);
  if (!err && sqlite3_prepare_v2(tl__sqlite_db(s),
                                 "INSERT INTO sample_blocks (session_id, seq, count, min_ns, "
                                 "max_ns, codec, data) VALUES (?, ?, ?, ?, ?, ?, ?)",
                                 -1, &b->ins, NULL) != SQLITE_OK)
    err = tl__store_sqlfail(s, sqlite3_errcode(tl__sqlite_db(s)), "storing imported samples");

  /* Lines are cut from large chunks; a line longer than LINE_MAX_BYTES is a
   * bad row, read past without being kept. */
  size_t have = 0, column = 0;
  int64_t unit = o->unit_ns, line_no = 0, nbad = 0;
  int eof = 0, header_done = o->format != TL_SAMPLES_CSV, too_long = 0;
  uint64_t fast_max = (uint64_t)(IMPORT_MAX_NS / unit); /* the largest bare integer, in units */
  while (!err && (!eof || have)) {
    if (!eof && have < CHUNK) {
      size_t r = fread(buf + have, 1, CHUNK - have, in);
      have += r;
      if (r == 0) {
        if (ferror(in)) {
          err = tl__store_fail(s, TL_EIO, "reading %s failed", o->source ? o->source : "input");
          break;
        }
        eof = 1;
      }
    }
    char *p = buf, *end = buf + have;
    while (!err) {
      uint64_t x;
      size_t used;
      if (column == 0 && header_done && !too_long && end - p >= 16 && (used = digit_line(p, &x)) &&
          x <= fast_max) {
        line_no++;
        b->block[b->n++] = (int64_t)x * unit;
        if (b->n == TL_BLOCK_MAX)
          err = flush_block(b);
        p += used;
        continue;
      }
      char *nl = memchr(p, '\n', (size_t)(end - p));
      if (!nl && !eof) {
        if (p == buf) { /* a whole chunk without a newline */
          too_long = 1;
          p = end;
        }
        break;
      }
      if (!nl && p == end)
        break;
      char *le = nl ? nl : end;
      line_no++;
      size_t len = (size_t)(le - p);
      int rc;
      int64_t v = 0;
      if (too_long || len > LINE_MAX_BYTES) {
        rc = bad(why, sizeof why, "line is too long");
        too_long = 0;
      } else if (!header_done) {
        header_done = 1;
        const char *t = trim_left(p, le);
        int numeric = t < le && (isdigit((unsigned char)*t) || *t == '.' || *t == '-' ||
                                 *t == '"' || *t == '#');
        if (numeric && *t == '"')
          numeric = t + 1 < le && isdigit((unsigned char)t[1]);
        if (!numeric && t < le) {
          rc = tl__import_parse_header(p, len, &column, &unit, why, sizeof why);
          if (rc == TL_OK)
            rc = 0;
          fast_max = (uint64_t)(IMPORT_MAX_NS / unit);
        } else {
          rc = tl__import_parse_line(o->format, p, len, column, unit, &v, why, sizeof why);
        }
      } else if (column == 0 && len && len < 16 && digits_value(p, len, &v)) {
        /* The common line, a bare integer: what the parser would return,
         * without its general checks. */
        if (v <= IMPORT_MAX_NS / unit) {
          v *= unit;
          rc = 1;
        } else {
          rc = tl__import_parse_line(o->format, p, len, column, unit, &v, why, sizeof why);
        }
      } else {
        rc = tl__import_parse_line(o->format, p, len, column, unit, &v, why, sizeof why);
      }
      if (rc == 1) {
        b->block[b->n++] = v;
        if (b->n == TL_BLOCK_MAX)
          err = flush_block(b);
      } else if (rc < 0) {
        nbad++;
        if (on_bad)
          on_bad(ctx, line_no, why);
      }
      p = nl ? nl + 1 : end;
    }
    have = (size_t)(end - p);
    memmove(buf, p, have);
  }
  /* A last line longer than a chunk ends with the input, no newline and
   * nothing left in the buffer: still a bad row, as a shorter one is. */
  if (!err && too_long) {
    nbad++;
    if (on_bad)
      on_bad(ctx, ++line_no, "line is too long");
  }
  if (!err)
    err = flush_block(b);
  if (!err && nbad && !o->skip_bad)
    err = tl__store_fail(s, TL_EINVAL,
                         "%lld bad row%s: nothing imported (fix them, or use --skip-bad)",
                         (long long)nbad, nbad == 1 ? "" : "s");
  if (!err && b->stored == 0)
    err = tl__store_fail(s, TL_EINVAL, "no samples in the input: nothing imported");
  if (!err) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(tl__sqlite_db(s),
                                "UPDATE sessions SET status = 'complete', sample_count = ?, "
                                "ended_ns = started_ns, heartbeat_ns = started_ns WHERE id = ?",
                                -1, &st, NULL);
    if (rc == SQLITE_OK) {
      sqlite3_bind_int64(st, 1, b->stored);
      sqlite3_bind_int64(st, 2, b->session_id);
      rc = sqlite3_step(st);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
      err = tl__store_sqlfail(s, rc, "finishing the import");
  }
  if (!err) {
    const tl_summary *m;
    err = tl__summary_finish(s, z, b->session_id, &m);
    if (!err)
      err = tl__summary_write(s, b->session_id, m);
  }
  tl__summarizer_free(z);
  sqlite3_finalize(b->ins);
  if (!err)
    err = exec(s, "COMMIT", "committing the import");
  if (err && in_txn)
    sqlite3_exec(tl__sqlite_db(s), "ROLLBACK", NULL, NULL, NULL);
  if (!err && uuid_out)
    memcpy(uuid_out, uuid, 37);
  if (imported)
    *imported = err ? 0 : b->stored;
  if (bad_rows)
    *bad_rows = nbad;
  free(b);
  free(buf);
  free(cmd);
  return err;
}

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

#include "store_internal.h"

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

int tl__import_plan_make(tl_store *s, const tl_import_opts *o, tl__import_plan *p) {
  memset(p, 0, sizeof *p);
  if (o->format != TL_SAMPLES_CSV && o->format != TL_SAMPLES_JSONL)
    return tl__store_fail(s, TL_EINVAL, "import reads csv or jsonl");
  if (o->unit_ns < 1)
    return tl__store_fail(s, TL_EINVAL, "bad unit");
  tl_uuid4(p->run_uuid);
  const char *host = o->hostname ? o->hostname : "imported";
  snprintf(p->fingerprint, sizeof p->fingerprint, "imported:%s", host);
  if (o->fact_count > TL_IMPORT_FACTS_MAX)
    return tl__store_fail(s, TL_EINVAL, "too many host facts (at most %d)", TL_IMPORT_FACTS_MAX);
  char why[TL_WHY_MAX];
  size_t nf = 0;
  for (size_t i = 0; i < o->fact_count; i++) {
    const tl_host_key *k;
    if (tl_host_fact_parse(o->facts[i], &k, p->values[nf], sizeof p->values[nf], why, sizeof why))
      return tl__store_fail(s, TL_EINVAL, "--fact: %s", why);
    for (size_t j = 0; j < nf; j++)
      if (strcmp(p->facts[j].key, k->fact) == 0)
        return tl__store_fail(s, TL_EINVAL, "--fact: %s given twice", k->name);
    p->facts[nf] = (tl_fact){k->fact, p->values[nf], "tlstore import --fact"};
    nf++;
  }
  if (o->hostname)
    p->facts[nf++] = (tl_fact){"hostname", o->hostname, "tlstore import --host"};
  if (!(p->command_line = import_command_line(o)))
    return tl__store_fail(s, TL_ENOMEM, "out of memory importing");
  p->spec = (tl_session_spec){.run_uuid = p->run_uuid,
                              .label = o->label,
                              .probe = o->probe,
                              .delay_ns = o->delay_ns,
                              .command_line = p->command_line,
                              .host_fingerprint = p->fingerprint,
                              .hostname = host,
                              .libuv_version = "",
                              .facts = p->facts,
                              .fact_count = nf,
                              .started_ns = o->started_ns};
  return TL_OK;
}

void tl__import_plan_free(tl__import_plan *p) {
  free(p->command_line);
  p->command_line = NULL;
}

/* ======================================================================== */
/* Reading the input                                                         */

/* The state of one read: the chunk being cut into lines, the samples not
 * yet handed to the sink, and what the lines said so far. */
typedef struct {
  tl_store *s;
  const tl_import_opts *o;
  tl_bad_row_cb on_bad;
  void *ctx;
  tl__import_sink sink;
  void *sink_ctx;
  char *buf;
  size_t have; /* bytes in buf */
  int eof, header_done, too_long;
  size_t column; /* the CSV field with the latency */
  int64_t unit, line_no, bad, taken;
  uint64_t fast_max; /* the largest bare integer, in units */
  size_t n;          /* samples in block */
  int64_t block[TL_BLOCK_MAX];
} reader;

/* Hands the samples held to the sink. */
static int flush_block(reader *r) {
  if (!r->n)
    return TL_OK;
  int err = r->sink(r->sink_ctx, r->block, r->n);
  if (err == TL_OK)
    r->taken += (int64_t)r->n;
  r->n = 0;
  return err;
}

static int take(reader *r, int64_t v) {
  r->block[r->n++] = v;
  return r->n == TL_BLOCK_MAX ? flush_block(r) : TL_OK;
}

static void bad_row(reader *r, const char *why) {
  r->bad++;
  if (r->on_bad)
    r->on_bad(r->ctx, r->line_no, why);
}

/* The first line of a CSV: a header when it does not start like a number
 * (it then names the column and the unit), else a row. */
static int first_line(reader *r, const char *p, size_t len, int64_t *v, char *why, size_t whylen) {
  const char *le = p + len;
  r->header_done = 1;
  const char *t = trim_left(p, le);
  int numeric =
      t < le && (isdigit((unsigned char)*t) || *t == '.' || *t == '-' || *t == '"' || *t == '#');
  if (numeric && *t == '"')
    numeric = t + 1 < le && isdigit((unsigned char)t[1]);
  if (numeric || t >= le)
    return tl__import_parse_line(r->o->format, p, len, r->column, r->unit, v, why, whylen);
  int rc = tl__import_parse_header(p, len, &r->column, &r->unit, why, whylen);
  r->fast_max = (uint64_t)(IMPORT_MAX_NS / r->unit);
  return rc == TL_OK ? 0 : rc;
}

/* One line (without its newline): 1 and *v for a sample, 0 for none, < 0
 * for a bad row with why. */
static int one_line(reader *r, const char *p, size_t len, int64_t *v, char *why, size_t whylen) {
  if (r->too_long || len > LINE_MAX_BYTES) {
    r->too_long = 0;
    return bad(why, whylen, "line is too long");
  }
  if (!r->header_done)
    return first_line(r, p, len, v, why, whylen);
  /* The common line, a bare integer: what the parser would return,
   * without its general checks. */
  if (r->column == 0 && len && len < 16 && digits_value(p, len, v) &&
      *v <= IMPORT_MAX_NS / r->unit) {
    *v *= r->unit;
    return 1;
  }
  return tl__import_parse_line(r->o->format, p, len, r->column, r->unit, v, why, whylen);
}

/* Cuts the lines of buf[0..have) and takes their samples; what is left (a
 * line not yet whole) moves to the start of buf. */
static int cut_lines(reader *r) {
  char *p = r->buf, *end = r->buf + r->have;
  char why[TL_WHY_MAX];
  int err = TL_OK;
  while (!err) {
    uint64_t x;
    size_t used;
    if (r->column == 0 && r->header_done && !r->too_long && end - p >= 16 &&
        (used = digit_line(p, &x)) && x <= r->fast_max) {
      r->line_no++;
      err = take(r, (int64_t)x * r->unit);
      p += used;
      continue;
    }
    char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl && !r->eof) {
      if (p == r->buf) { /* a whole chunk without a newline */
        r->too_long = 1;
        p = end;
      }
      break;
    }
    if (!nl && p == end)
      break;
    char *le = nl ? nl : end;
    r->line_no++;
    int64_t v = 0;
    int rc = one_line(r, p, (size_t)(le - p), &v, why, sizeof why);
    if (rc == 1)
      err = take(r, v);
    else if (rc < 0)
      bad_row(r, why);
    p = nl ? nl + 1 : end;
  }
  r->have = (size_t)(end - p);
  memmove(r->buf, p, r->have);
  return err;
}

int tl__import_read(tl_store *s, FILE *in, const tl_import_opts *o, tl_bad_row_cb on_bad, void *ctx,
                    tl__import_sink sink, void *sink_ctx, int64_t *bad_rows) {
  reader *r = calloc(1, sizeof *r);
  char *buf = malloc(CHUNK + 1);
  if (!r || !buf) {
    free(r);
    free(buf);
    return tl__store_fail(s, TL_ENOMEM, "out of memory importing");
  }
  *r = (reader){.s = s,
                .o = o,
                .on_bad = on_bad,
                .ctx = ctx,
                .sink = sink,
                .sink_ctx = sink_ctx,
                .buf = buf,
                .header_done = o->format != TL_SAMPLES_CSV,
                .unit = o->unit_ns};
  r->fast_max = (uint64_t)(IMPORT_MAX_NS / r->unit);
  /* Lines are cut from large chunks; a line longer than LINE_MAX_BYTES is a
   * bad row, read past without being kept. */
  int err = TL_OK;
  while (!err && (!r->eof || r->have)) {
    if (!r->eof && r->have < CHUNK) {
      size_t got = fread(r->buf + r->have, 1, CHUNK - r->have, in);
      r->have += got;
      if (got == 0) {
        if (ferror(in)) {
          err = tl__store_fail(s, TL_EIO, "reading %s failed", o->source ? o->source : "input");
          break;
        }
        r->eof = 1;
      }
    }
    err = cut_lines(r);
  }
  /* A last line longer than a chunk ends with the input, no newline and
   * nothing left in the buffer: still a bad row, as a shorter one is. */
  if (!err && r->too_long) {
    r->line_no++;
    bad_row(r, "line is too long");
  }
  if (!err)
    err = flush_block(r);
  if (!err && r->bad && !o->skip_bad)
    err = tl__store_fail(s, TL_EINVAL,
                         "%lld bad row%s: nothing imported (fix them, or use --skip-bad)",
                         (long long)r->bad, r->bad == 1 ? "" : "s");
  if (!err && r->taken == 0)
    err = tl__store_fail(s, TL_EINVAL, "no samples in the input: nothing imported");
  *bad_rows = r->bad;
  free(r->buf);
  free(r);
  return err;
}

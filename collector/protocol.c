/* protocol.c: parsing the lines a child probe (node, exec:CMD) writes to
 * tl. The protocol is line based and tiny so that any language can speak it
 * in ten lines (README, "Writing a probe"):
 *
 *   child -> tl   hello 1         first line: protocol version 1 (or 2)
 *   tl -> child   measure NS      version 1: arm one timer for NS nanoseconds
 *   tl -> child   plan D,.. N GAP version 2: measure the delays D in turn, N
 *                                 times each (0: until stdin closes), arming
 *                                 each timer from the previous callback
 *   child -> tl   sample NS       nanoseconds from arming to the callback,
 *                                 optionally followed by the sample's causes
 *                                 as the child read them outside its timed
 *                                 interval: runq=NS nivcsw=N migrated=0|1
 *   child -> tl   fact KEY VALUE  something the child learnt (its runtime's
 *                                 version ...), stored as a session fact
 *   child -> tl   error TEXT      the child cannot go on; TEXT is shown
 *   child -> tl   # TEXT, blank   ignored
 *
 * The parser takes one line without its newline and never reads outside it,
 * so it can be fuzzed on its own. */
#include <stdio.h>
#include <string.h>

#include "collect_internal.h"

static int fail(char *why, size_t whylen, const char *msg) {
  if (why && whylen)
    snprintf(why, whylen, "%s", msg);
  return TL_EINVAL;
}

/* A decimal number of 1..19 digits that fits in int64_t, all of [s, s+n). */
static int parse_u63(const char *s, size_t n, int64_t *out) {
  if (n == 0 || n > 19)
    return -1;
  int64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return -1;
    int d = s[i] - '0';
    if (v > (INT64_MAX - d) / 10)
      return -1;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

/* "runq=NS nivcsw=N migrated=0|1", any of them in any order, separated by
 * single spaces; 0, or -1 when one is malformed or unknown. */
static int parse_causes(const char *s, size_t n, tl__msg *msg) {
  static const char *const names[] = {"runq=", "nivcsw=", "migrated="};
  int64_t *fields[] = {&msg->runq_ns, &msg->nivcsw, &msg->migrated};
  if (!n)
    return -1; /* "sample 12 ": a space and nothing */
  while (n) {
    const char *sp = memchr(s, ' ', n);
    size_t len = sp ? (size_t)(sp - s) : n;
    int known = 0;
    for (int k = 0; k < 3 && !known; k++) {
      size_t kl = strlen(names[k]);
      if (len > kl && memcmp(s, names[k], kl) == 0) {
        if (parse_u63(s + kl, len - kl, fields[k]))
          return -1;
        known = 1;
      }
    }
    if (!known || (msg->migrated > 1))
      return -1;
    if (!sp)
      break;
    n -= len + 1;
    s = sp + 1;
    if (!n)
      return -1; /* a trailing space */
  }
  return 0;
}

int tl__protocol_parse_line(const char *line, size_t len, tl__msg *msg, char *why, size_t whylen) {
  memset(msg, 0, sizeof *msg);
  if (len && line[len - 1] == '\r')
    len--;
  if (len > TL__PROTOCOL_LINE_MAX)
    return fail(why, whylen, "line too long");
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)line[i];
    if ((c < 0x20 && c != '\t') || c == 0x7f)
      return fail(why, whylen, "control character in the line");
  }
  if (len == 0 || line[0] == '#') {
    msg->kind = TL__MSG_SKIP;
    return TL_OK;
  }
  const char *sp = memchr(line, ' ', len);
  size_t word = sp ? (size_t)(sp - line) : len;
  const char *arg = sp ? sp + 1 : line + len;
  size_t arglen = sp ? len - word - 1 : 0;

  if (word == 5 && memcmp(line, "error", 5) == 0) {
    msg->kind = TL__MSG_ERROR;
    msg->text = arg;
    msg->text_len = arglen;
    return TL_OK;
  }
  if (word == 5 && memcmp(line, "hello", 5) == 0) {
    if (parse_u63(arg, arglen, &msg->value))
      return fail(why, whylen, "expected 'hello VERSION' with a whole number");
    if (msg->value < 1 || msg->value > TL__PROTOCOL_VERSION)
      return fail(why, whylen, "unsupported protocol version (tl speaks versions 1 and 2)");
    msg->kind = TL__MSG_HELLO;
    return TL_OK;
  }
  if (word == 4 && memcmp(line, "fact", 4) == 0) {
    const char *vsp = memchr(arg, ' ', arglen);
    size_t klen = vsp ? (size_t)(vsp - arg) : arglen;
    if (!vsp || klen == 0 || klen > TL__PROTOCOL_FACT_KEY_MAX)
      return fail(why, whylen, "expected 'fact KEY VALUE' with a key of 1 to 32 characters");
    for (size_t i = 0; i < klen; i++)
      if (!arg[i] || !strchr("abcdefghijklmnopqrstuvwxyz0123456789._-", arg[i]))
        return fail(why, whylen, "a fact's key is made of a-z 0-9 . _ -");
    if (arglen - klen - 1 > TL__PROTOCOL_FACT_VALUE_MAX)
      return fail(why, whylen, "a fact's value is at most 256 bytes");
    msg->kind = TL__MSG_FACT;
    msg->key = arg;
    msg->key_len = klen;
    msg->text = vsp + 1;
    msg->text_len = arglen - klen - 1;
    return TL_OK;
  }
  if (word == 6 && memcmp(line, "sample", 6) == 0) {
    const char *fsp = memchr(arg, ' ', arglen);
    size_t nlen = fsp ? (size_t)(fsp - arg) : arglen;
    if (parse_u63(arg, nlen, &msg->value))
      return fail(why, whylen, "expected 'sample NS' with NS a whole number of nanoseconds");
    msg->runq_ns = msg->nivcsw = msg->migrated = -1;
    if (fsp && parse_causes(fsp + 1, arglen - nlen - 1, msg))
      return fail(why, whylen,
                  "a sample's causes are runq=NS nivcsw=N migrated=0|1, each a whole number");
    msg->kind = TL__MSG_SAMPLE;
    return TL_OK;
  }
  return fail(why, whylen, "unknown message (expected hello, sample, fact, error or # comment)");
}

int tl__protocol_plan(char *buf, size_t len, const int64_t *delays_ns, size_t n, int64_t count,
                      int64_t gap_ns) {
  if (n == 0 || count < 0 || gap_ns < 0)
    return -1;
  size_t at = 0;
  int w = snprintf(buf, len, "plan ");
  for (size_t i = 0; w >= 0 && (size_t)w < len - at && i < n; i++) {
    at += (size_t)w;
    if (delays_ns[i] < 0)
      return -1;
    w = snprintf(buf + at, len - at, "%s%lld", i ? "," : "", (long long)delays_ns[i]);
  }
  if (w >= 0 && (size_t)w < len - at) {
    at += (size_t)w;
    w = snprintf(buf + at, len - at, " %lld %lld\n", (long long)count, (long long)gap_ns);
  }
  if (w < 0 || (size_t)w >= len - at || at + (size_t)w > TL__PROTOCOL_LINE_MAX + 1)
    return -1;
  return (int)(at + (size_t)w);
}

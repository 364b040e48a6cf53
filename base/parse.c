/* parse.c: text in. Validation of everything a user hands to tl on the
 * command line (labels, tags, durations, numbers, dates and lists): each
 * parser is strict (no trailing garbage, no silent clamping) and says why it
 * refused. What makes text safe to write is text.c's. */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base_internal.h"

static int is_name_char(unsigned char c) { return isalnum(c) || c == '.' || c == '_' || c == '-'; }

/* Shared by labels and tag keys: [A-Za-z0-9][A-Za-z0-9._-]{0,max-1}. */
static int check_name(const char *what, const char *s, size_t len, size_t max, char *why,
                      size_t whylen) {
  if (len == 0)
    return tl_fail(why, whylen, TL_EINVAL, "%s is empty", what);
  if (len > max)
    return tl_fail(why, whylen, TL_EINVAL, "%s is longer than %zu characters", what, max);
  if (!isalnum((unsigned char)s[0]))
    return tl_fail(why, whylen, TL_EINVAL, "%s must start with a letter or digit", what);
  for (size_t i = 0; i < len; i++)
    if (!is_name_char((unsigned char)s[i]))
      return tl_fail(why, whylen, TL_EINVAL, "%s may hold only letters, digits, '.', '_' and '-'",
                     what);
  return TL_OK;
}

int tl_host_name_check(const char *name, char *why, size_t whylen) {
  if (!name)
    return tl_fail(why, whylen, TL_EINVAL, "host name is missing");
  return check_name("host name", name, strlen(name), 253, why, whylen);
}

int tl_label_check(const char *label, char *why, size_t whylen) {
  if (!label)
    return tl_fail(why, whylen, TL_EINVAL, "label is missing");
  return check_name("label", label, strlen(label), TL_LABEL_MAX, why, whylen);
}

int tl__text_check(const char *what, const char *s, size_t max, char *why, size_t whylen) {
  size_t len = strlen(s);
  if (len > max)
    return tl_fail(why, whylen, TL_EINVAL, "%s is longer than %zu bytes", what, max);
  if (tl__utf8_valid_prefix((const unsigned char *)s, len) != len)
    return tl_fail(why, whylen, TL_EINVAL, "%s is not valid UTF-8", what);
  for (size_t i = 0; i < len; i++)
    if (tl_control_len((const unsigned char *)s + i, len - i))
      return tl_fail(why, whylen, TL_EINVAL, "%s holds a control character", what);
  return TL_OK;
}

static int tag_check(const char *key, size_t klen, const char *value, char *why, size_t whylen) {
  int rc = check_name("tag key", key, klen, TL_TAG_KEY_MAX, why, whylen);
  return rc ? rc : tl__text_check("tag value", value, TL_TAG_VALUE_MAX, why, whylen);
}

int tl_tag_check(const char *key, const char *value, char *why, size_t whylen) {
  if (!key || !value)
    return tl_fail(why, whylen, TL_EINVAL, "tag key or value is missing");
  return tag_check(key, strlen(key), value, why, whylen);
}

int tl_tag_parse(const char *s, char *buf, const char **key, const char **value, char *why,
                 size_t whylen) {
  const char *eq = strchr(s, '=');
  if (!eq)
    return tl_fail(why, whylen, TL_EINVAL, "tag '%.40s' is not of the form key=value", s);
  size_t klen = (size_t)(eq - s);
  int rc = tag_check(s, klen, eq + 1, why, whylen);
  if (rc)
    return rc;
  memcpy(buf, s, strlen(s) + 1);
  buf[klen] = '\0';
  *key = buf;
  *value = buf + klen + 1;
  return TL_OK;
}

int tl_int_parse(const char *s, int64_t min, int64_t max, int64_t *out, char *why, size_t whylen) {
  if (!s || !*s)
    return tl_fail(why, whylen, TL_EINVAL, "empty number");
  if (isspace((unsigned char)s[0]))
    return tl_fail(why, whylen, TL_EINVAL, "'%.40s' is not a whole number", s);
  errno = 0;
  char *end;
  long long v = strtoll(s, &end, 10);
  if (*end != '\0' || end == s)
    return tl_fail(why, whylen, TL_EINVAL, "'%.40s' is not a whole number", s);
  if (errno == ERANGE || v < min || v > max)
    return tl_fail(why, whylen, TL_EINVAL, "%.40s is out of range (%lld to %lld)", s,
                   (long long)min, (long long)max);
  *out = v;
  return TL_OK;
}

int tl_duration_parse(const char *s, int64_t default_unit_ns, int64_t max_ns, int64_t *out_ns,
                      char *why, size_t whylen) {
  static const struct {
    const char *suffix;
    int64_t ns;
  } units[] = {{"ns", 1},
               {"us", 1000},
               {"ms", 1000000},
               {"s", 1000000000},
               {"m", 60000000000LL},
               {"h", 3600000000000LL},
               {"d", 86400000000000LL}};
  if (!s || !*s)
    return tl_fail(why, whylen, TL_EINVAL, "empty duration");
  /* Digits, at most one '.', then an optional unit. Parsed by hand so that
   * "1.5ms" is exact and nothing like "1e3" or "0x10" slips through. */
  const char *p = s;
  uint64_t whole = 0, frac = 0, frac_scale = 1;
  int digits = 0, dropped = 0;
  while (isdigit((unsigned char)*p)) {
    if (whole > UINT64_MAX / 10 - 1)
      return tl_fail(why, whylen, TL_EINVAL, "duration '%.40s' is too large", s);
    whole = whole * 10 + (uint64_t)(*p++ - '0');
    digits++;
  }
  if (*p == '.') {
    p++;
    while (isdigit((unsigned char)*p)) {
      if (frac_scale < 1000000000000ULL) {
        frac = frac * 10 + (uint64_t)(*p - '0');
        frac_scale *= 10;
      } else if (*p != '0') {
        dropped = 1;
      }
      p++;
      digits++;
    }
  }
  if (!digits)
    return tl_fail(why, whylen, TL_EINVAL, "'%.40s' is not a duration (try 50ms, 30s, 10m, 2h)", s);
  int64_t unit = default_unit_ns;
  if (*p) {
    unit = 0;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
      if (strcmp(p, units[i].suffix) == 0)
        unit = units[i].ns;
    if (!unit)
      return tl_fail(why, whylen, TL_EINVAL,
                     "unknown unit in '%.40s' (use ns, us, ms, s, m, h or d)", s);
  }
  if (whole > (uint64_t)max_ns / (uint64_t)unit)
    return tl_fail(why, whylen, TL_EINVAL, "duration '%.40s' is too large", s);
  /* tl counts whole nanoseconds: frac / frac_scale * unit must be one, that
   * is frac a multiple of frac_scale / gcd(frac_scale, unit). */
  uint64_t a = frac_scale, b = (uint64_t)unit;
  while (b) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  if (dropped || frac % (frac_scale / a))
    return tl_fail(why, whylen, TL_EINVAL, "duration '%.40s' is not a whole number of nanoseconds",
                   s);
  uint64_t ns = whole * (uint64_t)unit;
  /* frac / frac_scale * unit, without overflow: frac < frac_scale <= 1e12. */
  uint64_t part_ns = frac / (frac_scale / a) * ((uint64_t)unit / a); /* exact, see above */
  if (ns + part_ns > (uint64_t)max_ns)
    return tl_fail(why, whylen, TL_EINVAL, "duration '%.40s' is too large", s);
  *out_ns = (int64_t)(ns + part_ns);
  return TL_OK;
}

int tl_delay_parse(const char *s, int64_t *out_ns, char *why, size_t whylen) {
  return tl_duration_parse(s, 1000000LL, TL_DELAY_MAX_NS, out_ns, why, whylen);
}

int tl_probe_name_check(const char *name, char *why, size_t whylen) {
  if (strncmp(name, "exec:", 5) != 0) {
    if (tl_label_check(name, NULL, 0) != TL_OK)
      return tl_fail(why, whylen, TL_EINVAL,
                     "not a probe name (a name such as uv, or exec:COMMAND)");
    return TL_OK;
  }
  size_t n = strlen(name + 5);
  if (n == 0 || n > 1024)
    return tl_fail(why, whylen, TL_EINVAL, "exec:COMMAND needs a command of 1 to 1024 bytes");
  if (tl__utf8_valid_prefix((const unsigned char *)name, n + 5) != n + 5)
    return tl_fail(why, whylen, TL_EINVAL, "the command is not valid UTF-8");
  for (size_t i = 0; i < n + 5; i++)
    if (tl_control_len((const unsigned char *)name + i, n + 5 - i))
      return tl_fail(why, whylen, TL_EINVAL, "the command holds a control character");
  return TL_OK;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
 * days_from_civil algorithm). */
static int64_t days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

static int days_in_month(int y, int m) {
  static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return days[m - 1] + (m == 2 && leap);
}

static int fixed_digits(const char *p, int n, int *out) {
  int v = 0;
  for (int i = 0; i < n; i++) {
    if (!isdigit((unsigned char)p[i]))
      return -1;
    v = v * 10 + (p[i] - '0');
  }
  *out = v;
  return 0;
}

int tl_date_parse(const char *s, int64_t *out_ns, char *why, size_t whylen) {
  int y, mo, d, h = 0, mi = 0, sec = 0;
  size_t len = s ? strlen(s) : 0;
  if ((len != 10 && len != 20) || fixed_digits(s, 4, &y) || s[4] != '-' ||
      fixed_digits(s + 5, 2, &mo) || s[7] != '-' || fixed_digits(s + 8, 2, &d))
    return tl_fail(why, whylen, TL_EINVAL,
                   "'%.40s' is not a date (use YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ)", s ? s : "");
  if (len == 20 && (s[10] != 'T' || fixed_digits(s + 11, 2, &h) || s[13] != ':' ||
                    fixed_digits(s + 14, 2, &mi) || s[16] != ':' || fixed_digits(s + 17, 2, &sec) ||
                    s[19] != 'Z'))
    return tl_fail(why, whylen, TL_EINVAL,
                   "'%.40s' is not a date (use YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ)", s);
  if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 ||
      sec > 59)
    return tl_fail(why, whylen, TL_EINVAL, "'%.40s' is not a valid date", s);
  int64_t secs = ((days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60 + sec;
  /* Nanoseconds in 64 bits end in April 2262. */
  if (secs > INT64_MAX / 1000000000LL)
    return tl_fail(why, whylen, TL_EINVAL,
                   "'%.40s' is too far in the future (tl's dates end in 2262)", s);
  *out_ns = secs * 1000000000LL;
  return TL_OK;
}

void tl_date_format(int64_t ns, char *buf, size_t len) {
  time_t t = (time_t)(ns / 1000000000LL);
  struct tm tm;
  if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
    snprintf(buf, len, "?");
}

int tl_list_split(char *s, char **items, size_t max, size_t *count, char *why, size_t whylen) {
  size_t n = 0;
  if (!s || !*s)
    return tl_fail(why, whylen, TL_EINVAL, "empty list");
  char *p = s;
  for (;;) {
    char *comma = strchr(p, ',');
    if (comma)
      *comma = '\0';
    if (!*p)
      return tl_fail(why, whylen, TL_EINVAL, "empty item in list");
    if (n == max)
      return tl_fail(why, whylen, TL_EINVAL, "too many items in list (at most %zu)", max);
    for (size_t i = 0; i < n; i++)
      if (strcmp(items[i], p) == 0)
        return tl_fail(why, whylen, TL_EINVAL, "'%.40s' is given twice", p);
    items[n++] = p;
    if (!comma)
      break;
    p = comma + 1;
  }
  *count = n;
  return TL_OK;
}

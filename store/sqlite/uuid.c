/* uuid.c: how a file stores a session's UUID and its run's.
 *
 * sessions.uuid and sessions.run_uuid hold a UUID that tl made (36
 * characters, lower-case hex and four hyphens: 8-4-4-4-12) as its 16 bytes,
 * a BLOB, which saves 40 bytes a session in the row and 20 in the index of
 * UUIDs; any other text (written by hand, or by a program other than tl)
 * stays TEXT. The two forms never meet, so a UUID stays unique. Everything
 * above this backend sees the text: the conversion happens only where a
 * statement binds a UUID or reads one. */
#include <string.h>

#include "sqlite_internal.h"

enum { UUID_BYTES = 16, UUID_CHARS = 36 };

static int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  return -1;
}

static int is_hyphen_at(size_t i) { return i == 8 || i == 13 || i == 18 || i == 23; }

/* 1 and the 16 bytes in out when text is a UUID as tl writes it, else 0. */
static int uuid_pack(const char *text, size_t len, uint8_t out[UUID_BYTES]) {
  if (!text || len != UUID_CHARS)
    return 0;
  size_t n = 0;
  for (size_t i = 0; i < UUID_CHARS; i++) {
    if (is_hyphen_at(i)) {
      if (text[i] != '-')
        return 0;
      continue;
    }
    int hi = hex_value(text[i]), lo = hex_value(text[i + 1]);
    if (hi < 0 || lo < 0)
      return 0;
    out[n++] = (uint8_t)(hi << 4 | lo);
    i++;
  }
  return 1;
}

static void uuid_unpack(const uint8_t in[UUID_BYTES], char out[37]) {
  static const char digits[] = "0123456789abcdef";
  size_t at = 0;
  for (size_t b = 0; b < UUID_BYTES; b++) {
    if (is_hyphen_at(at))
      out[at++] = '-';
    out[at++] = digits[in[b] >> 4];
    out[at++] = digits[in[b] & 15];
  }
  out[at] = '\0';
}

int tl__bind_uuid(sqlite3_stmt *st, int i, const char *text) {
  uint8_t raw[UUID_BYTES];
  if (uuid_pack(text, text ? strlen(text) : 0, raw))
    return sqlite3_bind_blob(st, i, raw, UUID_BYTES, SQLITE_TRANSIENT);
  return sqlite3_bind_text(st, i, text, -1, SQLITE_TRANSIENT);
}

const char *tl__column_uuid(sqlite3_stmt *st, int i, char buf[37]) {
  if (sqlite3_column_type(st, i) == SQLITE_BLOB && sqlite3_column_bytes(st, i) == UUID_BYTES) {
    uuid_unpack(sqlite3_column_blob(st, i), buf);
    return buf;
  }
  const unsigned char *t = sqlite3_column_text(st, i);
  return t ? (const char *)t : "";
}

void tl__uuid_blob_fn(sqlite3_context *cx, int argc, sqlite3_value **argv) {
  (void)argc;
  uint8_t raw[UUID_BYTES];
  if (sqlite3_value_type(argv[0]) == SQLITE_TEXT &&
      uuid_pack((const char *)sqlite3_value_text(argv[0]), (size_t)sqlite3_value_bytes(argv[0]),
                raw))
    sqlite3_result_blob(cx, raw, UUID_BYTES, SQLITE_TRANSIENT);
  else
    sqlite3_result_value(cx, argv[0]);
}

/* fuzz_protocol.c: tl__protocol_parse_line, the lines a child probe writes.
 * The input is one line (any bytes, not NUL-terminated, in a buffer of
 * exactly its size so that a read past it is caught). Promises: TL_OK or
 * TL_EINVAL with a reason; an accepted line has no control character but
 * tab; a fact's key and value lie inside the line, the key of the characters
 * keys take; a sample is a non-negative count of nanoseconds that prints back to
 * the same message; hello is a version tl speaks (1 or 2); error text lies inside the line;
 * parsing is repeatable and a trailing CR changes nothing. */
#include <stdio.h>

#include "collect_internal.h"
#include "fuzz.h"

static void same(const tl__msg *a, const tl__msg *b) {
  TL_FUZZ_ASSERT(a->kind == b->kind && a->value == b->value && a->text_len == b->text_len);
  TL_FUZZ_ASSERT(a->text_len == 0 || memcmp(a->text, b->text, a->text_len) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *line = malloc(size + 1); /* + 1: room for the CR test below */
  if (!line)
    abort();
  memcpy(line, data, size);
  tl__msg msg, again;
  char why[128] = "";
  int rc = tl__protocol_parse_line(line, size, &msg, why, sizeof why);
  TL_FUZZ_ASSERT(rc == TL_OK || rc == TL_EINVAL);
  if (rc != TL_OK) {
    TL_FUZZ_ASSERT(why[0]);
    free(line);
    return 0;
  }
  size_t n = size && line[size - 1] == '\r' ? size - 1 : size;
  TL_FUZZ_ASSERT(n <= TL__PROTOCOL_LINE_MAX);
  for (size_t i = 0; i < n; i++)
    TL_FUZZ_ASSERT(((unsigned char)line[i] >= 0x20 || line[i] == '\t') && line[i] != 0x7f);

  /* Accepted once, accepted again the same way; with a CR added too. */
  TL_FUZZ_ASSERT(tl__protocol_parse_line(line, size, &again, NULL, 0) == TL_OK);
  same(&msg, &again);
  if (n == size) {
    line[size] = '\r';
    TL_FUZZ_ASSERT(tl__protocol_parse_line(line, size + 1, &again, NULL, 0) == TL_OK);
    same(&msg, &again);
  }

  char text[64];
  switch (msg.kind) {
  case TL__MSG_SKIP:
    TL_FUZZ_ASSERT(n == 0 || line[0] == '#');
    break;
  case TL__MSG_HELLO:
    TL_FUZZ_ASSERT(msg.value >= 1 && msg.value <= TL__PROTOCOL_VERSION);
    break;
  case TL__MSG_SAMPLE: {
    TL_FUZZ_ASSERT(msg.value >= 0);
    int k = snprintf(text, sizeof text, "sample %lld", (long long)msg.value);
    TL_FUZZ_ASSERT(tl__protocol_parse_line(text, (size_t)k, &again, NULL, 0) == TL_OK);
    TL_FUZZ_ASSERT(again.kind == TL__MSG_SAMPLE && again.value == msg.value);
    break;
  }
  case TL__MSG_FACT:
    TL_FUZZ_ASSERT(n >= 4 && memcmp(line, "fact ", 5) == 0 && msg.key == line + 5);
    TL_FUZZ_ASSERT(msg.key_len >= 1 && msg.key_len <= TL__PROTOCOL_FACT_KEY_MAX);
    TL_FUZZ_ASSERT(msg.text == msg.key + msg.key_len + 1 && msg.text + msg.text_len == line + n);
    TL_FUZZ_ASSERT(msg.text_len <= TL__PROTOCOL_FACT_VALUE_MAX);
    for (size_t i = 0; i < msg.key_len; i++)
      TL_FUZZ_ASSERT(strchr("abcdefghijklmnopqrstuvwxyz0123456789._-", msg.key[i]));
    break;
  case TL__MSG_ERROR:
    TL_FUZZ_ASSERT(msg.text >= line && msg.text + msg.text_len <= line + n);
    TL_FUZZ_ASSERT(n >= 5 && memcmp(line, "error", 5) == 0);
    break;
  default:
    abort();
  }
  free(line);
  return 0;
}

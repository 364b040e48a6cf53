/* fuzz_tag.c: tl_tag_parse. An accepted tag splits at its first '=' into a
 * label-like key and a value of valid UTF-8 without control characters (C0,
 * DEL, C1), at most TL_TAG_VALUE_MAX bytes. The parser writes only
 * strlen(s) + 1 bytes of its buffer. */
#include "fuzz.h"
#include "tl_store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s = tl_fuzz_cstr(data, size);
  size_t n = strlen(s);
  char *buf = malloc(n + 1); /* exactly what the contract asks for */
  const char *key = NULL, *value = NULL;
  char why[TL_WHY_MAX] = "";
  if (tl_tag_parse(s, buf, &key, &value, why, sizeof why) == TL_OK) {
    TL_FUZZ_ASSERT(tl_label_check(key, NULL, 0) == TL_OK);
    size_t k = strlen(key), v = strlen(value);
    TL_FUZZ_ASSERT(k <= TL_TAG_KEY_MAX && v <= TL_TAG_VALUE_MAX && k + 1 + v == n);
    TL_FUZZ_ASSERT(memcmp(s, key, k) == 0 && s[k] == '=' && strcmp(s + k + 1, value) == 0);
    for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
      TL_FUZZ_ASSERT(*p >= 0x20 && *p != 0x7f);
      TL_FUZZ_ASSERT(!(p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f));
    }
  } else {
    TL_FUZZ_ASSERT(why[0]);
  }
  free(buf);
  free(s);
  return 0;
}

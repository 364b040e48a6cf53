/* text.c: text tl writes where it cannot trust it. The one UTF-8 decoder
 * (tl_utf8_len) and the one list of control characters (tl_control_len)
 * behind text written to a terminal (tl_fput_safe) and as JSON
 * (tl_fput_json), and behind the checks of user text in parse.c. It calls
 * nothing else of tl, so that the error messages (error.c) can use it. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base_internal.h"

size_t tl_utf8_len(const unsigned char *s, size_t len) {
  if (!len)
    return 0;
  unsigned char c = s[0];
  size_t n;
  unsigned int cp;
  if (c < 0x80)
    return 1;
  if ((c & 0xE0) == 0xC0)
    n = 2, cp = c & 0x1F;
  else if ((c & 0xF0) == 0xE0)
    n = 3, cp = c & 0x0F;
  else if ((c & 0xF8) == 0xF0)
    n = 4, cp = c & 0x07;
  else
    return 0;
  if (n > len)
    return 0;
  for (size_t k = 1; k < n; k++) {
    if ((s[k] & 0xC0) != 0x80)
      return 0;
    cp = (cp << 6) | (s[k] & 0x3F);
  }
  /* Overlong forms, surrogates and values past U+10FFFF are not UTF-8. */
  if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
      cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

size_t tl__utf8_valid_prefix(const unsigned char *s, size_t len) {
  size_t i = 0, n;
  while (i < len && (n = tl_utf8_len(s + i, len - i)))
    i += n;
  return i;
}

size_t tl_control_len(const unsigned char *s, size_t len) {
  if (len && (s[0] < 0x20 || s[0] == 0x7f))
    return 1; /* C0 and DEL */
  if (len >= 2 && s[0] == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f)
    return 2; /* C1 (U+0080..U+009F): a terminal may act on CSI U+009B */
  /* The bidirectional formatting characters (U+061C, U+200E, U+200F,
   * U+202A..U+202E, U+2066..U+2069) reorder the text after them, on a page
   * or a terminal: a name could show as something it is not. */
  if (len >= 2 && s[0] == 0xd8 && s[1] == 0x9c)
    return 2;
  if (len >= 3 && s[0] == 0xe2 && s[1] == 0x80 &&
      (s[2] == 0x8e || s[2] == 0x8f || (s[2] >= 0xaa && s[2] <= 0xae)))
    return 3;
  if (len >= 3 && s[0] == 0xe2 && s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9)
    return 3;
  return 0;
}

void tl_fput_safe(FILE *f, const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  size_t len = strlen(s);
  size_t i = 0;
  while (i < len) {
    size_t end = i + tl__utf8_valid_prefix(p + i, len - i);
    while (i < end) {
      size_t c = tl_control_len(p + i, end - i);
      if (!c) {
        fputc(p[i++], f);
        continue;
      }
      for (size_t k = 0; k < c; k++)
        fprintf(f, "\\x%02x", p[i++]);
    }
    if (i < len)
      fprintf(f, "\\x%02x", p[i++]);
  }
}

void tl_fput_json(FILE *o, const char *s) {
  fputc('"', o);
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  size_t left = strlen((const char *)p);
  while (left) {
    /* Printable ASCII but for the two escaped, as it is, a run at a time:
     * a fleet's JSON writes some 300 MB of it. */
    size_t run = 0;
    while (run < left && p[run] >= 0x20 && p[run] < 0x7f && p[run] != '"' && p[run] != '\\')
      run++;
    if (run) {
      fwrite(p, 1, run, o);
      p += run;
      left -= run;
      continue;
    }
    unsigned char c = *p;
    size_t n = tl_utf8_len(p, left);
    if (n == 0) {
      fputs("\\ufffd", o);
      n = 1;
    } else if (n > 1 && tl_control_len(p, n)) { /* C1 and bidi controls, inert */
      fprintf(o, "\\u%04x",
              n == 2 ? (p[0] & 0x1f) << 6 | (p[1] & 0x3f)
                     : (p[0] & 0x0f) << 12 | (p[1] & 0x3f) << 6 | (p[2] & 0x3f));
    } else if (n > 1) {
      fwrite(p, 1, n, o);
    } else if (c == '"' || c == '\\') {
      fprintf(o, "\\%c", c);
    } else { /* a control: the run took every other ASCII byte */
      fprintf(o, "\\u%04x", c);
    }
    p += n;
    left -= n;
  }
  fputc('"', o);
}

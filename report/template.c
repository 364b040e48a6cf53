/* template.c: the frame of every HTML page tl writes (the comparison page
 * and a site's index): one self-contained head with the inline stylesheet,
 * light and dark schemes, no script and no file from elsewhere. */
#include "report_internal.h"

static const char css[] =
    ":root{color-scheme:light dark;--fg:#1c1c21;--bg:#fdfdfc;--muted:#5c5c66;--line:#d5d5dc;"
    "--best:#e3f1e6;--code:#f1f1f4;--accent:#0b5cad;"
    "--c0:#0072B2;--c1:#D55E00;--c2:#009E73;--c3:#CC79A7;--c4:#E69F00;--c5:#56B4E9;--c6:#000000}\n"
    "@media (prefers-color-scheme:dark){:root{--fg:#e7e7ea;--bg:#16171b;--muted:#a3a3ad;"
    "--line:#3b3c45;--best:#1f3b2a;--code:#24252c;--accent:#7fb6f0;"
    "--c0:#56B4E9;--c1:#FF8F4D;--c2:#39C59B;--c3:#E3A4CB;--c4:#F0C04F;--c5:#A8D8F5;--c6:#F0F0F0}}\n"
    "*{box-sizing:border-box}\n"
    "body{margin:0;background:var(--bg);color:var(--fg);"
    "font:16px/1.55 system-ui,-apple-system,\"Segoe UI\",Roboto,\"Helvetica Neue\",Arial,"
    "sans-serif}\n"
    "main{max-width:72rem;margin:0 auto;padding:1rem 1rem 3rem}\n"
    "nav{max-width:72rem;margin:0 auto;padding:.75rem 1rem 0;font-size:.9rem}\n"
    "nav a{margin-right:1rem}\n"
    "a{color:var(--accent)}\n"
    "h1{font-size:1.7rem;line-height:1.25;margin:.5rem 0 1rem}\n"
    /* On a phone a long title ("Timer latency by memory: 512M, 1G ...")
     * would take a third of the first screen from the answer. */
    "@media (max-width:40rem){h1{font-size:1.3rem;margin:.25rem 0 .5rem}}\n"
    "h2{font-size:1.3rem;margin:2.2rem 0 .6rem;padding-bottom:.2rem;"
    "border-bottom:1px solid var(--line)}\n"
    "h3{font-size:1.05rem;margin:1.5rem 0 .4rem}\n"
    ".scroll{overflow-x:auto;margin:.5rem 0 1rem}\n"
    "table{border-collapse:collapse;font-size:.88rem;font-variant-numeric:tabular-nums}\n"
    "th,td{padding:.3rem .6rem;border-bottom:1px solid var(--line);text-align:left;"
    "vertical-align:top}\n"
    "th{font-weight:600;color:var(--muted);white-space:nowrap}\n"
    ".n{text-align:right}\n"
    "td.best{background:var(--best)}\n"
    "code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85rem}\n"
    "pre{background:var(--code);padding:.6rem .8rem;border-radius:4px;white-space:pre-wrap;"
    "word-break:break-all}\n"
    ".charts{display:flex;flex-wrap:wrap;gap:1rem 1.5rem;margin:.5rem 0 1rem}\n"
    "figure{margin:0;flex:1 1 28rem;max-width:100%}\n"
    ".small figure{flex:0 1 20rem}\n"
    "figcaption{font-size:.85rem;color:var(--muted)}\n"
    "svg{display:block;width:100%;height:auto}\n"
    "svg text{fill:currentColor;font-family:inherit}\n"
    "@media (max-width:40rem){svg text{font-size:22px}.small svg text{font-size:13px}}\n"
    /* A phone folds wide tables (format.c): a row is a block, its first
     * cell on a line of its own, then "header value" pairs side by side. */
    "@media (max-width:40rem){.fold thead{display:none}.fold table,.fold tbody{display:block}"
    ".fold tr{display:flex;flex-wrap:wrap;gap:0 1rem;padding:.35rem 0;"
    "border-bottom:1px solid var(--line)}"
    ".fold td{border:0;padding:0;text-align:left;min-width:0;overflow-wrap:anywhere}"
    ".fold td:first-child{flex-basis:100%;font-weight:600}.fold td:empty{display:none}"
    ".fold td[data-h]::before{content:attr(data-h) \" \";color:var(--muted);font-size:.8rem}}\n"
    "svg .grid{stroke:var(--line)}\n"
    "svg .axis{stroke:var(--muted)}\n"
    ".s0{stroke:var(--c0);fill:var(--c0)}.s1{stroke:var(--c1);fill:var(--c1)}"
    ".s2{stroke:var(--c2);fill:var(--c2)}.s3{stroke:var(--c3);fill:var(--c3)}"
    ".s4{stroke:var(--c4);fill:var(--c4)}.s5{stroke:var(--c5);fill:var(--c5)}"
    ".s6{stroke:var(--c6);fill:var(--c6)}\n"
    "svg .line{fill:none}\n"
    "svg .hollow{fill:var(--bg)}\n"
    "footer{color:var(--muted);font-size:.85rem;margin-top:3rem}\n"
    ".answer{display:grid;grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:0 1.5rem;"
    "border:1px solid var(--line);border-radius:6px;padding:0 1rem .5rem;margin:1rem 0}\n"
    ".answer h2{margin-top:1rem}.answer h3{margin-top:1rem}.answer figure{margin:.5rem 0}\n"
    "@media (max-width:50rem){.answer{display:block}}\n"
    "svg .key{fill:currentColor;stroke:currentColor}\n"
    "details{margin:.5rem 0}summary{cursor:pointer}\n"
    "svg.spark{display:inline-block;width:120px;height:24px;vertical-align:middle}\n"
    "@media print{body{background:#fff;color:#000}nav{display:none}a{color:#000}}\n";

const char tl__svg_file_css[] =
    "svg{--fg:#1c1c21;--bg:#fdfdfc;--line:#d5d5dc;--muted:#5c5c66;"
    "--c0:#0072B2;--c1:#D55E00;--c2:#009E73;--c3:#CC79A7;--c4:#E69F00;--c5:#56B4E9;--c6:#000000;"
    "color:var(--fg)}"
    "text{fill:currentColor;font:16px system-ui,-apple-system,\"Segoe UI\",Roboto,Arial,"
    "sans-serif}"
    ".bg{fill:var(--bg);stroke:none}.grid{stroke:var(--line)}.axis{stroke:var(--muted)}"
    ".s0{stroke:var(--c0);fill:var(--c0)}.s1{stroke:var(--c1);fill:var(--c1)}"
    ".s2{stroke:var(--c2);fill:var(--c2)}.s3{stroke:var(--c3);fill:var(--c3)}"
    ".s4{stroke:var(--c4);fill:var(--c4)}.s5{stroke:var(--c5);fill:var(--c5)}"
    ".s6{stroke:var(--c6);fill:var(--c6)}.line{fill:none}.hollow{fill:var(--bg)}"
    ".key{fill:currentColor;stroke:currentColor}";

void tl__html_head(tl__page *p, const char *title) {
  FILE *o = p->out;
  fputs("<!DOCTYPE html><!-- " TL_REPORT_MARKER
        ": written by tlreport; tlreport may replace this file -->\n"
        "<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta name=\"generator\" content=\"tlreport " TL_VERSION "\">\n<title>",
        o);
  tl_html_escape(o, title);
  fputs("</title>\n<style>\n", o);
  fputs(css, o);
  fputs("</style>\n</head>\n<body>\n", o);
  if (p->o->site_links) {
    /* Each link says what it opens: compare.html may be grouped by --by. */
    fputs("<nav><a href=\"index.html\">All labels and hosts</a><a href=\"compare.html\">", o);
    if (p->o->compare_by) {
      fputs("Timer latency by ", o);
      tl_html_escape(o, p->o->compare_by);
    } else {
      fputs("Comparison of every label", o);
    }
    fputs("</a></nav>\n", o);
  }
  fputs("<main>\n", o);
}

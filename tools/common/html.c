/* The tools' HTML pages (html.h). */
#include "html.h"

void html_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&#39;", out); break;
        default: fputc(*s, out);
        }
    }
}

/* Sorts a table by the column whose header is clicked (again: the other
 * way), numerically where the cells say data-v; index.html?sort=K sorts
 * by column K when the page opens, descending with ?sort=-K. */
static const char script[] =
    "function fpkSort(th,desc){var t=th.closest('table'),b=t.tBodies[0],"
    "i=Array.prototype.indexOf.call(th.parentNode.children,th),"
    "r=Array.prototype.slice.call(b.rows);"
    "var v=function(tr){var c=tr.children[i],d=c.getAttribute('data-v');"
    "return d===null?c.textContent:parseFloat(d);};"
    "r.sort(function(x,y){var a=v(x),c=v(y),s=(typeof a==='number'?a-c:"
    "String(a).localeCompare(String(c)));return desc?-s:s;});"
    "r.forEach(function(tr){b.appendChild(tr);});th.setAttribute('data-desc',desc?'1':'0');}\n"
    "document.querySelectorAll('table.sortable th').forEach(function(th){"
    "th.addEventListener('click',function(){fpkSort(th,th.getAttribute('data-desc')!=='1');});});\n"
    "(function(){var m=/[?&]sort=(-?)(\\d+)/.exec(location.search);if(m){"
    "var th=document.querySelectorAll('table.sortable th')[parseInt(m[2],10)];"
    "if(th)fpkSort(th,m[1]==='-');}})();\n";

static const char style[] =
    "body{font-family:sans-serif;margin:1.5em;color:#222;max-width:120em}"
    "h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}"
    "pre.summary{background:#f6f6f6;padding:0.8em;border:1px solid #ddd;overflow-x:auto}"
    "table{border-collapse:collapse;font-size:0.8em}"
    "th,td{border:1px solid #ccc;padding:0.2em 0.45em;text-align:right}"
    "th{background:#f0f0f0;cursor:pointer;position:sticky;top:0}"
    "td.name{text-align:left;font-family:monospace}"
    "tr.total td{border-top:2px solid #888;font-weight:bold}"
    "td.lo{background:#fff3e0}td.mid{background:#ffd8a8}td.hi{background:#ffa8a8}"
    ".grid{display:flex;flex-wrap:wrap;gap:0.6em}"
    "figure{margin:0;font-size:0.75em;font-family:monospace;max-width:330px;"
    "overflow-wrap:anywhere}img{max-width:100%;height:auto}";

void html_head(FILE *out, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>",
          out);
    html_text(out, title);
    fprintf(out, "</title>\n<style>%s</style>\n</head>\n<body>\n", style);
}

void html_tail(FILE *out)
{
    fprintf(out, "<script>\n%s</script>\n</body>\n</html>\n", script);
}

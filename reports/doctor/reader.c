/* Bounded-memory line reader: a fixed read buffer and a fixed line buffer, so a 2 GB log or a
 * binary file with no newline at all costs the same memory as a small one. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"

#define NT_READ_BLOCK 65536
#define NT_BINARY_PROBE 8192

struct nt_linereader {
  FILE *fp;
  int own;
  char buf[NT_READ_BLOCK];
  size_t len, pos;
  char line[NT_LINE_MAX];
  unsigned long lineno;
  unsigned long truncated;
  uint64_t bytes;
  int probed, binary, eof;
};

static nt_linereader_t *reader_new(FILE *fp, int own) {
  nt_linereader_t *r = calloc(1, sizeof(*r));
  if (!r) return NULL;
  r->fp = fp;
  r->own = own;
  return r;
}

nt_linereader_t *nt_linereader_open(const char *path) {
  FILE *fp;
  int own = 1;
  if (strcmp(path, "-") == 0) {
    fp = stdin;
    own = 0;
  } else {
    fp = fopen(path, "rb");
    if (!fp) return NULL;
  }
  nt_linereader_t *r = reader_new(fp, own);
  if (!r) {
    int e = errno;
    if (own) fclose(fp);
    errno = e;
  }
  return r;
}

nt_linereader_t *nt_linereader_open_stream(FILE *fp) { return reader_new(fp, 0); }

/* Refills the read buffer; returns the number of bytes now available, 0 at EOF, -1 on error. */
static int fill(nt_linereader_t *r) {
  if (r->eof) return 0;
  r->len = fread(r->buf, 1, sizeof(r->buf), r->fp);
  r->pos = 0;
  if (r->len == 0) {
    r->eof = 1;
    return ferror(r->fp) ? -1 : 0;
  }
  r->bytes += r->len;
  return 1;
}

/* A NUL byte in the first block means binary (grep's rule). So does a block that is mostly
 * control characters other than tab, CR, LF, FF and ESC (colour codes appear in real logs). */
static void probe(nt_linereader_t *r) {
  size_t n = r->len < NT_BINARY_PROBE ? r->len : NT_BINARY_PROBE, ctrl = 0;
  r->probed = 1;
  if (memchr(r->buf, 0, n)) {
    r->binary = 1;
    return;
  }
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)r->buf[i];
    if (c < 32 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != 27) ctrl++;
  }
  if (n >= 64 && ctrl * 10 > n * 3) r->binary = 1;
}

int nt_linereader_next(nt_linereader_t *r, const char **line, size_t *len) {
  size_t n = 0;
  int cut = 0, got = 0;
  for (;;) {
    if (r->pos >= r->len) {
      int f = fill(r);
      if (f < 0) return -1;
      if (f == 0) break;
      if (!r->probed) probe(r);
    }
    char *start = r->buf + r->pos;
    size_t avail = r->len - r->pos;
    char *nl = memchr(start, '\n', avail);
    size_t take = nl ? (size_t)(nl - start) : avail;
    got = 1;
    if (n + take > NT_LINE_MAX - 1) {
      size_t room = NT_LINE_MAX - 1 - n;
      memcpy(r->line + n, start, room);
      n += room;
      cut = 1;
    } else {
      memcpy(r->line + n, start, take);
      n += take;
    }
    r->pos += take + (nl ? 1 : 0);
    if (nl) break;
  }
  if (!got) return 0;
  if (n > 0 && r->line[n - 1] == '\r') n--;
  r->line[n] = '\0';
  /* A stray NUL would end the C string early; keep the rest of the line visible instead. */
  for (char *p = memchr(r->line, 0, n); p; p = memchr(p, 0, (size_t)(r->line + n - p))) *p = ' ';
  r->lineno++;
  if (cut) r->truncated++;
  *line = r->line;
  *len = n;
  return 1;
}

int nt_linereader_is_binary(const nt_linereader_t *r) { return r->binary; }

unsigned long nt_linereader_lineno(const nt_linereader_t *r) { return r->lineno; }

unsigned long nt_linereader_truncated(const nt_linereader_t *r) { return r->truncated; }

uint64_t nt_linereader_bytes(const nt_linereader_t *r) { return r->bytes; }

void nt_linereader_close(nt_linereader_t *r) {
  if (!r) return;
  if (r->own && r->fp) fclose(r->fp);
  free(r);
}

/* Bounded-memory line reader: a fixed read buffer and a fixed line buffer, so a 2 GB log or a
 * binary file with no newline at all costs the same memory as a small one. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "nettune/logline.h"

#define NT_READ_BLOCK 65536
#define NT_BINARY_PROBE 8192 /* non-NUL bytes looked at to call a file binary */

struct nt_linereader {
    FILE *fp;  /* a stream given by the caller (fuzz target), or NULL */
    gzFile gz; /* a file or stdin, read through zlib: gzip is decompressed, anything else as is */
    int own;
    char *buf;    /* block bytes, allocated at the first read */
    size_t block;
    size_t len, pos;
    char line[NT_LINE_MAX];
    unsigned long newlines; /* '\n' consumed so far */
    unsigned long lineno;   /* line of the last record returned */
    unsigned long truncated;
    uint64_t bytes, nul;
    int probed, binary, eof;
    int fd; /* the descriptor gz reads (open), -1 for a stream given by the caller */
    int gzip, gzerr; /* the input was gzip-compressed; its stream was damaged */
    int split, piece; /* long lines come back in pieces; the last one returned was a piece */
};

static nt_linereader_t *nt_reader_new(FILE *fp, int own)
{
    nt_linereader_t *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->fp = fp;
    r->own = own;
    r->block = NT_READ_BLOCK;
    return r;
}

nt_linereader_t *nt_linereader_open(const char *path)
{
    int fd = strcmp(path, "-") == 0 ? dup(0) : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) { /* read(2) fails with EISDIR: say so now */
        close(fd);
        errno = EISDIR;
        return NULL;
    }
    gzFile gz = gzdopen(fd, "rb");
    if (!gz) {
        close(fd);
        errno = ENOMEM;
        return NULL;
    }
    gzbuffer(gz, NT_READ_BLOCK);
    nt_linereader_t *r = nt_reader_new(NULL, 1);
    if (!r) {
        gzclose(gz);
        errno = ENOMEM;
        return NULL;
    }
    r->gz = gz;
    r->fd = fd;
    return r;
}

nt_linereader_t *nt_linereader_open_stream(FILE *fp)
{
    nt_linereader_t *r = nt_reader_new(fp, 0);
    if (r)
        r->fd = -1;
    return r;
}

int nt_linereader_skip(nt_linereader_t *r, int64_t bytes)
{
    if (!r->gz || r->buf || bytes < 0)
        return -1;
    if (gzseek(r->gz, (z_off_t)bytes, SEEK_SET) != (z_off_t)bytes)
        return -1;
    r->bytes = (uint64_t)bytes;
    return 0;
}

int nt_linereader_fd(const nt_linereader_t *r)
{
    return r->gz && !r->gzip ? r->fd : -1;
}

/* Refills the read buffer; returns the number of bytes now available, 0 at EOF, -1 on error. */
static int nt_fill(nt_linereader_t *r)
{
    if (r->eof)
        return 0;
    r->pos = 0;
    if (!r->buf && !(r->buf = malloc(r->block))) {
        r->len = 0;
        errno = ENOMEM;
        return -1;
    }
    if (r->gz) {
        int n = gzread(r->gz, r->buf, (unsigned)r->block);
        if (n <= 0) {
            r->len = 0;
            r->eof = 1;
            if (n < 0) {
                int zerr;
                gzerror(r->gz, &zerr);
                r->gzerr = 1;
                if (zerr != Z_ERRNO)
                    errno = EILSEQ; /* a damaged or cut gzip stream */
                return -1;
            }
            int zerr = Z_OK;
            gzerror(r->gz, &zerr);
            if (zerr == Z_BUF_ERROR) { /* the gzip stream ends before its end marker */
                r->gzerr = 1;
                errno = EPIPE;
                return -1;
            }
            return 0;
        }
        r->len = (size_t)n;
        r->gzip = r->gzip || !gzdirect(r->gz);
        r->bytes += r->len;
        return 1;
    }
    r->len = fread(r->buf, 1, r->block, r->fp);
    if (r->len == 0) {
        r->eof = 1;
        return ferror(r->fp) ? -1 : 0;
    }
    r->bytes += r->len;
    return 1;
}

/* Length of the valid UTF-8 sequence at p (at most n bytes available), 0 if it is not one. */
static size_t nt_linereader_utf8_len(const unsigned char *p, size_t n)
{
    size_t k = p[0] >= 0xc2 && p[0] <= 0xdf   ? 2
               : p[0] >= 0xe0 && p[0] <= 0xef ? 3
               : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4
                                              : 0;
    if (!k || k > n)
        return 0;
    for (size_t i = 1; i < k; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    return k;
}

/* Binary means "not a text log at all", decided on the first block: a known binary or compressed
 * file format (ELF, gzip, bzip2, xz, zstd, zip), or text bytes in the minority: over 30% of the
 * first 8 KiB of non-NUL bytes are control characters (other than tab, CR, LF, FF and ESC: colour
 * codes appear in real logs) or bytes that are not UTF-8. NUL bytes alone do not make a file
 * binary: logs cut by a node crash, or copied from a filesystem that lost their tail, end in (or
 * contain) runs of NUL bytes; nt_linereader_next skips them like line breaks. */
static void nt_linereader_probe(nt_linereader_t *r)
{
    static const struct {
        const char *magic;
        size_t len;
    } formats[] = {{"\x7f"
                    "ELF",
                    4},
                   {"\x1f\x8b", 2}, /* gzip inside gzip: decompressed once only */
                   {"BZh", 3},
                   {"\xfd"
                    "7zXZ",
                    5},
                   {"\x28\xb5\x2f\xfd", 4},
                   {"PK\x03\x04", 4}};
    const unsigned char *b = (const unsigned char *)r->buf;
    size_t text = 0, bad = 0;
    r->probed = 1;
    if (r->len >= 2 && ((b[0] == 0xff && b[1] == 0xfe) || (b[0] == 0xfe && b[1] == 0xff))) {
        r->binary =
            2; /* UTF-16 with its byte-order mark (PowerShell's '>' writes it): half NUL bytes */
        return;
    }
    for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
        if (r->len >= formats[i].len && memcmp(b, formats[i].magic, formats[i].len) == 0) {
            r->binary = 1;
            return;
        }
    for (size_t i = 0; i < r->len && text + bad < NT_BINARY_PROBE;) {
        unsigned char c = b[i];
        size_t k = 1;
        if (c == 0) {
            i++;
            continue;
        }
        if (c >= 0x80) {
            k = nt_linereader_utf8_len(b + i, r->len - i);
            if (k)
                text++;
            else
                k = 1, bad++;
        } else if ((c < 32 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != 27) ||
                   c == 0x7f) {
            bad++;
        } else {
            text++;
        }
        i += k;
    }
    if (text + bad >= 64 && bad * 10 > (text + bad) * 3)
        r->binary = 1;
}

/* Records end at '\n' or at a run of NUL bytes (skipped and counted); a record keeps the number of
 * the line it starts on, counted in '\n' as grep -n and editors do, so evidence stays findable. */
int nt_linereader_next(nt_linereader_t *r, const char **line, size_t *len)
{
    size_t n = 0;
    int cut = 0, content = 0, skipped_nul = 0;
    r->piece = 0;
    for (;;) {
        if (r->pos >= r->len) {
            int f = nt_fill(r);
            if (f < 0)
                return -1;
            if (f == 0) {
                r->piece = r->split && content; /* no newline yet: the writer may be mid-line */
                break;
            }
            if (!r->probed)
                nt_linereader_probe(r);
        }
        char *start = r->buf + r->pos;
        size_t avail = r->len - r->pos;
        if (!content && *start == '\0') { /* a NUL run before any text: padding */
            size_t k = 0;
            while (k < avail && start[k] == '\0')
                k++;
            r->nul += k;
            r->pos += k;
            skipped_nul = 1;
            continue;
        }
        if (!content)
            r->lineno = r->newlines + 1;
        content = 1;
        size_t take = 0;
        while (take < avail && start[take] != '\n' && start[take] != '\0')
            take++;
        if (n + take > NT_LINE_MAX - 1) {
            size_t room = NT_LINE_MAX - 1 - n;
            memcpy(r->line + n, start, room);
            n += room;
            if (r->split) { /* the rest comes back on the next call */
                r->pos += room;
                r->piece = 1;
                break;
            }
            cut = 1;
        } else {
            memcpy(r->line + n, start, take);
            n += take;
        }
        r->pos += take;
        if (take < avail) { /* stopped at '\n' or NUL */
            if (start[take] == '\n') {
                r->pos++;
                r->newlines++;
            }
            /* a NUL is left in the buffer: the next call skips the run */
            /* an empty record after a NUL run ("text\0\0\0\n") belongs to the line already returned
             */
            if (n == 0 && skipped_nul) {
                content = 0;
                skipped_nul = 0;
                continue;
            }
            break;
        }
    }
    if (!content)
        return 0;
    if (n > 0 && r->line[n - 1] == '\r' && !r->piece)
        n--;
    r->line[n] = '\0';
    if (cut)
        r->truncated++;
    *line = r->line;
    *len = n;
    return 1;
}

int nt_linereader_set_block(nt_linereader_t *r, size_t bytes)
{
    if (!r || r->buf || r->bytes || bytes < 1024 || bytes > NT_READ_BLOCK)
        return -1;
    if (r->gz && gzbuffer(r->gz, (unsigned)bytes) != 0)
        return -1;
    r->block = bytes;
    return 0;
}

void nt_linereader_set_split(nt_linereader_t *r, int on)
{
    r->split = on;
}

int nt_linereader_piece(const nt_linereader_t *r)
{
    return r->piece;
}

void nt_linereader_rearm(nt_linereader_t *r)
{
    r->eof = 0;
    if (r->gz)
        gzclearerr(r->gz);
    else if (r->fp)
        clearerr(r->fp);
}

int nt_linereader_is_binary(const nt_linereader_t *r)
{
    return r->binary;
}

unsigned long nt_linereader_lineno(const nt_linereader_t *r)
{
    return r->lineno;
}

unsigned long nt_linereader_truncated(const nt_linereader_t *r)
{
    return r->truncated;
}

uint64_t nt_linereader_nul_bytes(const nt_linereader_t *r)
{
    return r->nul;
}

uint64_t nt_linereader_bytes(const nt_linereader_t *r)
{
    return r->bytes;
}

void nt_linereader_close(nt_linereader_t *r)
{
    if (!r)
        return;
    if (r->own && r->fp)
        fclose(r->fp);
    if (r->gz)
        gzclose(r->gz);
    free(r->buf);
    free(r);
}

int64_t nt_linereader_offset(const nt_linereader_t *r)
{
    if (r->gz)
        return (int64_t)gzoffset(r->gz);
    return r->fp ? (int64_t)ftello(r->fp) : -1;
}

int nt_linereader_gzip(const nt_linereader_t *r)
{
    return r->gzip;
}

int nt_linereader_gzip_damaged(const nt_linereader_t *r)
{
    return r->gzerr;
}

/* nettune-watch's run as phases: collect the inputs, read and align them, judge, write the
 * document and the summary. One cleanup at the end. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "nettune/clock.h"
#include "nettune/exitcode.h"
#include "nettune/logline.h"
#include "nettune/nccltests.h"
#include "nettune/report.h"
#include "nettune/version.h"
#include "render_watch.h"
#include "watch.h"

/* Calls of a communicator written into the document, the latest ones: the window may hold
 * more, and the busbw series covers the whole window. */
#define NT_WATCH_CALLS_SHOWN 64
/* The most ranks a communicator may claim: a record beyond is refused, not allocated. */
#define NT_WATCH_MAX_RANKS (1 << 20)

typedef struct {
    char **paths;
    size_t n, cap;
} path_list_t;

static int nt_watch_paths_add(path_list_t *l, const char *path)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **t = realloc(l->paths, cap * sizeof(*t));
        if (!t)
            return -1;
        l->paths = t;
        l->cap = cap;
    }
    if (!(l->paths[l->n] = strdup(path)))
        return -1;
    l->n++;
    return 0;
}

static int nt_watch_name_ends(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int nt_watch_str_compare(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The format of a file's content, as the reader tells it (nt_jobfmt_sniff on the first
 * non-blank line, through zlib for a .gz); NT_JOBFMT_UNKNOWN when the file is not Inspector's,
 * cannot be opened, or holds nothing yet (then *blank is 1). With `strict` (a file not named as
 * Inspector names its dumps) a JSON file must open as Inspector's writers open theirs: its first
 * key "header" (a record, one a line or pretty-printed: inspector_json.cc:26-258) or
 * "nccl_version" (ncclras -f json, client_support.cc:1919): any other JSON (an nccl-tests -J
 * document, a configuration) is not taken for a dump. */
static nt_jobfmt_t nt_watch_sniff(const char *path, int strict, int *blank)
{
    nt_linereader_t *lr = nt_linereader_open(path);
    nt_jobfmt_t f = NT_JOBFMT_UNKNOWN;
    const char *line;
    size_t n;
    int opened = 0; /* the first object's "{" stood alone on its line */
    *blank = lr != NULL;
    for (int i = 0; lr && i < 64 && nt_linereader_next(lr, &line, &n) > 0; i++) {
        const char *p = line;
        while (*p && isspace((unsigned char)*p))
            p++;
        if (!*p)
            continue;
        *blank = 0;
        if (!opened) {
            f = nt_jobfmt_sniff(p);
            if (!strict || f != NT_JOBFMT_INSPECTOR_JSON)
                break;
            p++;
            while (*p && isspace((unsigned char)*p))
                p++;
            if (!*p) {
                opened = 1;
                continue;
            }
        }
        if (strncmp(p, "\"header\"", 8) != 0 && strncmp(p, "\"nccl_version\"", 14) != 0)
            f = NT_JOBFMT_UNKNOWN;
        else
            f = NT_JOBFMT_INSPECTOR_JSON;
        break;
    }
    nt_linereader_close(lr);
    return f;
}

/* The names of the files a directory held that are not Inspector's, for the line that says so
 * ("ignored 2 files that are not Inspector dumps: a.json, notes.txt"), into buf. */
static void nt_watch_names(const path_list_t *l, size_t from, char *buf, size_t len)
{
    size_t k = 0;
    buf[0] = '\0';
    for (size_t i = from; i < l->n && k < len; i++) {
        int w = i - from < 8 ? snprintf(buf + k, len - k, "%s%s", i > from ? ", " : "", l->paths[i])
                             : snprintf(buf + k, len - k, ", and %zu more", l->n - i);
        k += w > 0 ? (size_t)w : 0;
        if (i - from >= 8)
            break;
    }
}

/* The files of one input: a file as it is; of a directory, every file whose content is
 * Inspector's, whatever its name (a dump copied as *.json is read), and the files named as
 * Inspector names them that hold nothing yet (<host>-pid<pid>.log, v2.30.7-1 inspector.cc:652;
 * nccl_inspector_metrics_<uuid>.prom, inspector_prom.cc:365-367: a rank's file before its first
 * dump), in name order. The other files (the job's own logs, notes) go to `ignored`: the summary
 * names them. Dot files and subdirectories are passed over; a path in `known` (sorted: the
 * inputs already open, in --follow) is taken without opening it again. Returns 0, or -1 after one line
 * naming the input and the fix when it is missing, cannot be opened, or holds no Inspector file
 * (unless `quiet_empty`: --follow waits for one), -2 when out of memory. `say` 0 keeps the
 * line to itself (a later poll of --follow: it was said at the first). */
static int nt_watch_input_collect(const char *input, path_list_t *l, path_list_t *ignored,
                                  const path_list_t *known, int quiet_empty, int say)
{
    struct stat st;
    if (strcmp(input, "-") != 0 && stat(input, &st) != 0) {
        if (say && quiet_empty && errno == ENOENT) /* --follow: a job's folder made later */
            fprintf(stderr, "nettune watch: '%s' does not exist yet: it is read once it appears "
                            "(--follow); until then it is an unread input (exit 2)\n", input);
        else if (say)
            fprintf(stderr,
                    "nettune watch: cannot read '%s': %s: give the folder NCCL_INSPECTOR_DUMP_DIR "
                    "names, or its files\n",
                    input, strerror(errno));
        return -1;
    }
    if (strcmp(input, "-") == 0 || !S_ISDIR(st.st_mode))
        return nt_watch_paths_add(l, input) < 0 ? -2 : 0;
    DIR *d = opendir(input);
    if (!d) {
        if (say)
            fprintf(stderr, "nettune watch: cannot open directory '%s': %s: give a folder this user can read\n",
                    input, strerror(errno));
        return -1;
    }
    size_t first = l->n, ifirst = ignored->n;
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        char path[4096];
        struct stat fst;
        int blank;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", input, e->d_name);
        if (stat(path, &fst) != 0 || !S_ISREG(fst.st_mode))
            continue;
        int named = nt_watch_name_ends(e->d_name, ".log") || nt_watch_name_ends(e->d_name, ".prom") ||
                    nt_watch_name_ends(e->d_name, ".log.gz");
        const char *key = path;
        if ((known->n && bsearch(&key, known->paths, known->n, sizeof(char *), nt_watch_str_compare)) ||
            nt_watch_sniff(path, !named, &blank) != NT_JOBFMT_UNKNOWN || (named && blank))
            rc = nt_watch_paths_add(l, path);
        else
            rc = nt_watch_paths_add(ignored, path);
    }
    closedir(d);
    if (rc < 0)
        return -2;
    /* qsort's base may not be NULL, even for 0 elements (a folder with no file of a kind) */
    if (l->n > first)
        qsort(l->paths + first, l->n - first, sizeof(char *), nt_watch_str_compare);
    if (ignored->n > ifirst)
        qsort(ignored->paths + ifirst, ignored->n - ifirst, sizeof(char *), nt_watch_str_compare);
    if (l->n == first && !quiet_empty) {
        char names[1024];
        nt_watch_names(ignored, ifirst, names, sizeof(names));
        if (say)
            fprintf(stderr,
                    "nettune watch: '%s' holds no Inspector dump%s%s%s: give "
                    "NCCL_INSPECTOR_DUMP_DIR of a job run with NCCL_INSPECTOR_ENABLE=1\n",
                    input, names[0] ? " (its files are not Inspector's: " : "", names,
                    names[0] ? ")" : "");
        return -1;
    }
    return 0;
}

/* One input file and its reader, kept open between polls in --follow. Without --follow the
 * reader is closed once the file is read, and what the document needs of it is kept here: a
 * reader holds some 200 KiB of buffers, which at thousands of ranks' files would be the
 * largest part of the memory. */
/* Files replaced under one input's name that are remembered (nt_watch_input_t gone_ino). */
#define NT_WATCH_GONE 8

typedef struct {
    char *path;
    nt_jobreader_t *r;
    int read; /* read to its end and closed (without --follow), or given up (bad) */
    int bad;  /* not Inspector's or not readable: said in one line, left out of the judgement */
    int alias; /* another input's file under a second name (renamed while followed): not read */
    unsigned long p2p, prom, ras;
    nt_jobfmt_t fmt;
    unsigned long records, skipped, partial, first_bad;
    int late; /* found by --follow after its first read: its files were written since */
    /* a gzip file whose stream ended early while followed (still being written): read again
     * from its start once its size changes from cut_size */
    int cut;
    off_t cut_size;
    int copied_said; /* the line about a mirror's copy was said */
    /* --follow: the file open under the name now, and the one it replaced (old_r: read on
     * through its descriptor, as a writer that keeps its file open writes on there), and the
     * counts of the readers closed */
    dev_t dev, old_dev;
    ino_t ino, old_ino;
    /* the files it replaced before (rotation after rotation), so that none of them is read
     * again under the name a rotation gave it */
    dev_t gone_dev[NT_WATCH_GONE];
    ino_t gone_ino[NT_WATCH_GONE];
    int ngone;
    nt_jobreader_t *old_r;
    double grew_s, old_grew_s; /* when each last gave a record (nt_clock_s), 0 never */
    unsigned long base_records, base_skipped, base_partial, base_first_bad;
    /* the last bytes read from in->r, as they were (sig_len bytes before sig_at) */
    unsigned char sig[32];
    int sig_len;
    int64_t sig_at;
} nt_watch_input_t;

/* What the document says of the input, from its readers (and those before them). */
static void nt_watch_input_keep(nt_watch_input_t *in)
{
    nt_jobreader_t *rs[2] = {in->r, in->old_r};
    in->fmt = nt_jobreader_format(in->r);
    in->records = in->base_records;
    in->skipped = in->base_skipped;
    in->partial = in->base_partial;
    in->first_bad = in->base_first_bad;
    for (int k = 0; k < 2; k++) {
        if (!rs[k])
            continue;
        if (in->fmt == NT_JOBFMT_UNKNOWN)
            in->fmt = nt_jobreader_format(rs[k]);
        in->records += nt_jobreader_records(rs[k]);
        in->skipped += nt_jobreader_skipped(rs[k]);
        in->partial += nt_jobreader_partial(rs[k]) + nt_jobreader_pending(rs[k]);
        if (!in->first_bad)
            in->first_bad = nt_jobreader_first_bad_line(rs[k]);
    }
}

/* Closes one of the input's readers, its counts kept in the base ones. */
static void nt_watch_input_retire(nt_watch_input_t *in, nt_jobreader_t **r)
{
    if (!*r)
        return;
    in->base_records += nt_jobreader_records(*r);
    in->base_skipped += nt_jobreader_skipped(*r);
    in->base_partial += nt_jobreader_partial(*r) + nt_jobreader_pending(*r);
    if (!in->base_first_bad)
        in->base_first_bad = nt_jobreader_first_bad_line(*r);
    nt_jobreader_close(*r);
    *r = NULL;
}

typedef struct {
    unsigned long records, p2p, prom, ras, skipped, partial;
    const nt_watch_input_t *first_skipped; /* the first input with a skipped line, or NULL */
    cJSON *ras_findings; /* RAS reports are snapshots: their findings are kept as read */
    nt_watch_outcome_t ras_out;
    path_list_t ras_comms; /* the communicators RAS lists, each id once */
} counts_t;

/* Keeps the id of a communicator RAS lists, once: the summary says which of them have no
 * Inspector record (RAS lists every communicator of the job, Inspector only those it timed).
 * Returns 0, -1 when out of memory. */
static int nt_watch_ras_comm_add(path_list_t *l, const char *id)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->paths[i], id) == 0)
            return 0;
    return nt_watch_paths_add(l, id);
}

/* summary.ras_only_communicators: the communicators RAS lists that no Inspector record is of
 * (the communicators the summary counts are those with Inspector records). */
static int nt_watch_ras_only_json(cJSON *sum, const path_list_t *ras, const nt_jobalign_t *a)
{
    cJSON *arr = cJSON_AddArrayToObject(sum, "ras_only_communicators");
    for (size_t i = 0; arr && i < ras->n; i++) {
        int timed = 0;
        for (size_t k = 0; k < nt_jobalign_ncomms(a) && !timed; k++)
            timed = strcmp(nt_jobalign_comm(a, k)->id, ras->paths[i]) == 0;
        cJSON *v = timed ? NULL : cJSON_CreateString(ras->paths[i]);
        if (!timed && (!v || !cJSON_AddItemToArray(arr, v)))
            return cJSON_Delete(v), -1;
    }
    return arr ? 0 : -1;
}

/* Gives an input up after its line was said: closed, never read again. Returns 1. */
static int nt_watch_input_bad(nt_watch_input_t *in)
{
    nt_jobreader_close(in->r);
    nt_jobreader_close(in->old_r);
    in->r = in->old_r = NULL;
    in->read = in->bad = 1;
    return 1;
}

/* Largest JSON document parsed whole to tell whether it is nccl-tests' (-J documents are a few
 * hundred KiB; a larger one is only said to be not Inspector's). */
#define NT_WATCH_NCCLT_MAX (16u << 20)

/* 1 when the JSON of an nccl-tests -J document is in `path`, as the shared nccl-tests reader
 * reads it (the one `nettune tune --replay` uses), 0 otherwise. */
static int nt_watch_is_ncclt_json(const char *path)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (!f)
        return 0;
    if (fstat(fileno(f), &st) != 0 || st.st_size <= 0 || (unsigned long long)st.st_size > NT_WATCH_NCCLT_MAX) {
        fclose(f);
        return 0;
    }
    char *text = malloc((size_t)st.st_size + 1);
    size_t n = text ? fread(text, 1, (size_t)st.st_size, f) : 0;
    fclose(f);
    if (!text)
        return 0;
    text[n] = '\0';
    cJSON *doc = cJSON_Parse(text);
    free(text);
    nt_ncclt_reader_t *r = doc ? nt_ncclt_reader_create() : NULL;
    int yes = r && nt_ncclt_reader_add_json(r, doc, 0) == 1;
    nt_ncclt_reader_destroy(r);
    cJSON_Delete(doc);
    return yes;
}

/* A file that gave no record but opens as JSON: when it does not open as Inspector's writers
 * open theirs (nt_watch_sniff strict), one line says what it is and the fix, and 1 is
 * returned; 0 when it may be Inspector's (its records were only damaged). A directory's files
 * were told apart when collected; this is for a FILE given as it is, which is read whatever
 * its content, so that an nccl-tests -J document is not reported as "no Inspector record". */
static int nt_watch_foreign_json(const char *path)
{
    int blank;
    /* its first line opens a JSON object (not a message written before a record), and that
     * object is not one of Inspector's writers */
    if (strcmp(path, "-") == 0 || nt_watch_sniff(path, 0, &blank) != NT_JOBFMT_INSPECTOR_JSON ||
        nt_watch_sniff(path, 1, &blank) != NT_JOBFMT_UNKNOWN || blank)
        return 0;
    if (nt_watch_is_ncclt_json(path))
        fprintf(stderr,
                "nettune watch: '%s' is an nccl-tests -J document, not an NCCL Inspector dump: "
                "the watch reads the files of NCCL_INSPECTOR_DUMP_DIR; nccl-tests results are "
                "read by 'nettune tune --replay %s'\n",
                path, path);
    else
        fprintf(stderr,
                "nettune watch: '%s' is JSON that is not NCCL Inspector's (its first key is "
                "neither \"header\", as in Inspector's records, nor \"nccl_version\", as in "
                "ncclras -f json): give the files of NCCL_INSPECTOR_DUMP_DIR\n",
                path);
    return 1;
}

static double nt_watch_now_us(void);

/* The records new in one of the input's readers (`r`: in->r or in->old_r) into the alignment,
 * each stamped with the watch's clock as it is read when `stamp` (a record was written before
 * it is read, so its read time less its dump time is never below the clocks' difference);
 * without `follow` the reader is closed at the end. Returns 0, 1 when the file is not
 * Inspector's or cannot be read (one line says so; the input is given up: a record it gave
 * before stays in the alignment), -1 when out of memory. */
static int nt_watch_file_records(nt_watch_input_t *in, nt_jobreader_t *r, nt_jobalign_t *a,
                                 counts_t *tot, int follow, int stamp)
{
    nt_jobrec_t rec;
    int got;
    unsigned long before = nt_jobreader_records(r);
    while ((got = nt_jobreader_next(r, &rec)) > 0) {
        rec.seen_us = stamp ? nt_watch_now_us() : NAN;
        if (rec.kind == NT_JOBREC_P2P)
            in->p2p++;
        else if (rec.kind == NT_JOBREC_AGG)
            in->prom++;
        else if (rec.kind == NT_JOBREC_RAS) {
            in->ras++;
            if (nt_watch_ras_judge(&rec, tot->ras_findings, &tot->ras_out) < 0 ||
                nt_watch_ras_comm_add(&tot->ras_comms, rec.comm_id) < 0)
                return -1;
        } else if (nt_jobalign_add(a, &rec) < 0)
            return -1;
    }
    if (got < 0 && follow && errno == EPIPE && r == in->r && !in->old_r) {
        /* a gzip stream that ends before its end marker: a compressor still writing it (a
         * rotated copy being compressed). Read again from its start once it grows; a tester's
         * copy compressed in two halves 1.5 s apart was given up, and with it --drain. */
        struct stat st;
        nt_watch_input_keep(in);
        in->cut_size = stat(in->path, &st) == 0 ? st.st_size : -1;
        if (!in->cut)
            fprintf(stderr, "nettune watch: '%s' ends inside its gzip stream (still being "
                            "written?): read again from its start once it grows\n", in->path);
        in->cut = 1;
        nt_jobreader_close(in->r);
        in->r = NULL;
        return 0;
    }
    if (got < 0) {
        fprintf(stderr, "nettune watch: error reading '%s': %s: its records so far are left out\n",
                in->path, strerror(errno));
        return nt_watch_input_bad(in);
    }
    if (nt_jobreader_format(r) == NT_JOBFMT_UNKNOWN && nt_jobreader_skipped(r)) {
        fprintf(stderr,
                "nettune watch: '%s' is not an NCCL Inspector log or textfile (line %lu): give "
                "the files of NCCL_INSPECTOR_DUMP_DIR\n",
                in->path, nt_jobreader_first_bad_line(r));
        return nt_watch_input_bad(in);
    }
    if (!nt_jobreader_records(r) && nt_jobreader_skipped(r) &&
        nt_jobreader_format(r) == NT_JOBFMT_INSPECTOR_JSON && nt_watch_foreign_json(in->path))
        return nt_watch_input_bad(in);
    if (nt_jobreader_records(r) > before) {
        if (r == in->r)
            in->grew_s = nt_clock_s();
        else
            in->old_grew_s = nt_clock_s();
    }
    nt_watch_input_keep(in);
    if (!follow) {
        nt_jobreader_close(in->r);
        in->r = NULL;
        in->read = 1;
    }
    return 0;
}

/* Opens a followed input's file again from its start as in->r (the reader before it closed).
 * Returns 0, -1 when it cannot (one line says so). */
static int nt_watch_file_open_again(nt_watch_input_t *in)
{
    if (!(in->r = nt_jobreader_open(in->path))) {
        fprintf(stderr, "nettune watch: cannot read '%s' again: %s: give a file this user can "
                        "read\n", in->path, strerror(errno));
        return -1;
    }
    nt_jobreader_follow(in->r, 1);
    return 0;
}

/* The last bytes read from a followed plain file, kept to tell at the next read whether the
 * file still holds them: a file truncated and written again past the point read (copytruncate
 * while the watch was stopped or starved, with an appending writer) is no shorter, and was read
 * on mid-file (a tester's watch stopped 2.5 s across a copytruncate lost about 190 records of
 * each rank). One pread of 32 bytes per file and read. */
static void nt_watch_sig_take(nt_watch_input_t *in)
{
    int fd = in->r ? nt_jobreader_fd(in->r) : -1;
    int64_t at = in->r ? nt_jobreader_offset(in->r) : -1;
    in->sig_len = 0;
    if (fd < 0 || at <= 0)
        return;
    size_t n = at < (int64_t)sizeof(in->sig) ? (size_t)at : sizeof(in->sig);
    if (pread(fd, in->sig, n, (off_t)(at - (int64_t)n)) == (ssize_t)n) {
        in->sig_len = (int)n;
        in->sig_at = at;
    }
}

/* Whether the followed file no longer holds the bytes nt_watch_sig_take kept. */
static int nt_watch_sig_changed(const nt_watch_input_t *in)
{
    unsigned char now[sizeof(in->sig)];
    int fd = in->r ? nt_jobreader_fd(in->r) : -1;
    if (fd < 0 || !in->sig_len)
        return 0;
    ssize_t got = pread(fd, now, (size_t)in->sig_len, (off_t)(in->sig_at - in->sig_len));
    return got == in->sig_len && memcmp(now, in->sig, (size_t)in->sig_len) != 0;
}

/* Whether the file now under the input's name holds, where the last read stopped, the bytes
 * read there (nt_watch_sig_take): a copy of the file and what was added since (a mirror that
 * copies the folder to a temporary name and renames it over, as rsync does). Then it is read
 * on from there, in->r replaced by a reader of the new file: a tester's mirror refreshed every
 * 0.5 s had every file read again from its start, 16,204 records counted for 2,391 written.
 * Returns 1 when so (in->r is the new file's reader), 0 otherwise. */
static int nt_watch_file_copied(nt_watch_input_t *in)
{
    unsigned char now[sizeof(in->sig)];
    if (!in->sig_len || !in->r || nt_jobreader_offset(in->r) != in->sig_at)
        return 0;
    int fd = open(in->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t got = pread(fd, now, (size_t)in->sig_len, (off_t)(in->sig_at - in->sig_len));
    close(fd);
    if (got != in->sig_len || memcmp(now, in->sig, (size_t)in->sig_len) != 0 ||
        nt_jobreader_pending(in->r))
        return 0;
    nt_jobreader_t *n = nt_jobreader_open(in->path);
    if (!n || nt_jobreader_skip(n, in->sig_at) != 0) {
        nt_jobreader_close(n);
        return 0;
    }
    nt_jobreader_follow(n, 1);
    nt_watch_input_retire(in, &in->r);
    in->r = n;
    return 1;
}

/* A followed file that was truncated (copytruncate: now shorter than what was read) or
 * replaced (another file under its name: rotation by rename and create) is read again from the
 * start of what is under its name now; otherwise its rank would read as silent, a false hang.
 * The file it replaced is read on through the descriptor held (old_r), as a writer that keeps
 * its file open (Inspector) writes on there, renamed or deleted; of two replaced files the one
 * that gave a record last is kept. Returns 1 when reopened (one line says so), 0 when nothing
 * changed, -1 when the new file cannot be opened (one line says so). */
static int nt_watch_file_reopen(nt_watch_input_t *in)
{
    struct stat st;
    if (stat(in->path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    int replaced = st.st_dev != in->dev || st.st_ino != in->ino;
    int64_t at = nt_jobreader_offset(in->r);
    if (!replaced && !(at >= 0 && (int64_t)st.st_size < at))
        return 0;
    if (replaced && nt_watch_file_copied(in)) {
        if (!in->copied_said) /* a mirror refreshes often: said once */
            fprintf(stderr, "nettune watch: '%s' was replaced by a copy of what was read (a "
                            "mirror's refresh) while followed: read on from where it was, here "
                            "and at its later refreshes\n", in->path);
        in->copied_said = 1;
        in->dev = st.st_dev;
        in->ino = st.st_ino;
        return 1;
    }
    if (replaced) {
        in->gone_dev[in->ngone % NT_WATCH_GONE] = in->dev;
        in->gone_ino[in->ngone % NT_WATCH_GONE] = in->ino;
        in->ngone++;
        if (in->old_r && in->old_grew_s > in->grew_s)
            nt_watch_input_retire(in, &in->r);
        else {
            nt_watch_input_retire(in, &in->old_r);
            in->old_r = in->r;
            in->old_grew_s = in->grew_s;
            in->old_dev = in->dev;
            in->old_ino = in->ino;
        }
        in->dev = st.st_dev;
        in->ino = st.st_ino;
    } else
        nt_watch_input_retire(in, &in->r);
    in->r = NULL;
    in->grew_s = 0;
    if (nt_watch_file_open_again(in) < 0)
        return -1;
    fprintf(stderr, "nettune watch: '%s' was %s while followed: read again from its start%s\n",
            in->path, replaced ? "replaced by another file" : "truncated",
            replaced ? ", and the file it replaced read on" : "");
    return 1;
}

/* Reads what is new in one input into the alignment (and, while following, what is under its
 * name again after a truncation or a replacement). Returns as nt_watch_file_records. */
static int nt_watch_file_read(nt_watch_input_t *in, nt_jobalign_t *a, counts_t *tot, int follow)
{
    if (in->read)
        return 0;
    /* What a followed file gains after its first read was written since the read before, and
     * so was all of a file found after the first read: their records are stamped with the
     * watch's clock, from which each rank's clock difference is told (nt_watch_rank_ts_us). A
     * file's content at the first read may be of any age. */
    int stamp = follow && (in->r || in->late);
    if (in->cut && !in->r) {
        struct stat st;
        if (stat(in->path, &st) != 0 || st.st_size == in->cut_size)
            return 0; /* the cut gzip file has not grown: nothing new to read */
    }
    /* Standard input that is not a file (a pipe) ends at its end: nothing is appended to it */
    struct stat sin;
    if (follow && strcmp(in->path, "-") == 0 && fstat(0, &sin) == 0 && !S_ISREG(sin.st_mode))
        follow = 0;
    if (!in->r) {
        struct stat st;
        in->r = nt_jobreader_open(in->path);
        if (!in->r) {
            fprintf(stderr, "nettune watch: cannot read '%s': %s: give a file this user can read\n",
                    in->path, strerror(errno));
            return nt_watch_input_bad(in);
        }
        nt_jobreader_follow(in->r, follow);
        if (follow && strcmp(in->path, "-") != 0 && stat(in->path, &st) == 0) {
            in->dev = st.st_dev;
            in->ino = st.st_ino;
        }
    }
    if (follow && in->ino && nt_watch_sig_changed(in)) {
        nt_watch_input_retire(in, &in->r);
        if (nt_watch_file_open_again(in) < 0)
            return nt_watch_input_bad(in);
        fprintf(stderr, "nettune watch: '%s' was truncated and written again while followed: "
                        "read again from its start (what was written before the truncation "
                        "and not read is in the copy only)\n", in->path);
    }
    int rc = in->old_r ? nt_watch_file_records(in, in->old_r, a, tot, follow, 1) : 0;
    if (rc == 0)
        rc = nt_watch_file_records(in, in->r, a, tot, follow, stamp);
    if (rc != 0 || !follow || !in->ino || !in->r) /* (no reader: a cut gzip file, closed) */
        return rc;
    int re = nt_watch_file_reopen(in);
    if (re < 0)
        return nt_watch_input_bad(in);
    if (re)
        rc = nt_watch_file_records(in, in->r, a, tot, follow, stamp);
    if (rc == 0 && in->r)
        nt_watch_sig_take(in);
    return rc;
}

/* The input's entry of the document, and its counts added to `tot`. */
static int nt_watch_input_json(const nt_watch_input_t *in, cJSON *inputs, counts_t *tot)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(inputs, o))
        return cJSON_Delete(o), -1;
    if (!cJSON_AddStringToObject(o, "path", in->path) ||
        !cJSON_AddStringToObject(o, "format", nt_jobfmt_name(in->fmt)) ||
        !cJSON_AddNumberToObject(o, "records", (double)in->records) ||
        !cJSON_AddNumberToObject(o, "p2p_records", (double)in->p2p) ||
        !cJSON_AddNumberToObject(o, "skipped", (double)in->skipped) ||
        !cJSON_AddNumberToObject(o, "partial", (double)in->partial) ||
        !(in->first_bad ? cJSON_AddNumberToObject(o, "first_bad_line", (double)in->first_bad)
                        : cJSON_AddNullToObject(o, "first_bad_line")))
        return -1;
    tot->records += in->records;
    tot->p2p += in->p2p;
    tot->prom += in->prom;
    tot->ras += in->ras;
    tot->skipped += in->skipped;
    tot->partial += in->partial;
    if (in->skipped && !tot->first_skipped)
        tot->first_skipped = in;
    return 0;
}

static cJSON *nt_watch_json_number(double v)
{
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

static int nt_watch_json_add_number(cJSON *o, const char *k, double v)
{
    cJSON *n = nt_watch_json_number(v);
    return n && cJSON_AddItemToObject(o, k, n) ? 0 : (cJSON_Delete(n), -1);
}

/* The calls shown: the latest NT_WATCH_CALLS_SHOWN of the window, every rank's exec time (null
 * where its record is missing) and the spread. */
static int nt_watch_calls_json(const nt_jobcomm_t *c, cJSON *o, unsigned long *complete)
{
    cJSON *calls = cJSON_AddArrayToObject(o, "calls");
    if (!calls)
        return -1;
    uint64_t lo = c->max_seq + 1 > c->window ? c->max_seq + 1 - c->window : 0;
    uint64_t shown = c->max_seq + 1 > NT_WATCH_CALLS_SHOWN ? c->max_seq + 1 - NT_WATCH_CALLS_SHOWN : 0;
    *complete = 0;
    for (uint64_t s = lo; c->any_seq && s <= c->max_seq; s++) {
        const nt_jobcall_t *k = nt_jobcomm_call(c, s);
        if (!k)
            continue;
        *complete += k->nseen == c->nranks;
        if (s < shown)
            continue;
        double mn, mx;
        int arg;
        nt_jobcall_spread(c, k, &mn, &mx, &arg);
        cJSON *e = cJSON_CreateObject(), *t;
        if (!e || !cJSON_AddItemToArray(calls, e))
            return cJSON_Delete(e), -1;
        if (!cJSON_AddNumberToObject(e, "seq", (double)k->seq) ||
            !cJSON_AddStringToObject(e, "coll", k->op) || nt_watch_json_add_number(e, "bytes", k->bytes) < 0 ||
            !cJSON_AddNumberToObject(e, "ranks_seen", k->nseen) ||
            !(t = cJSON_AddArrayToObject(e, "exec_us")))
            return -1;
        for (int i = 0; i < c->nranks; i++) {
            cJSON *v = nt_watch_json_number(k->exec_us[i]);
            if (!v || !cJSON_AddItemToArray(t, v))
                return cJSON_Delete(v), -1;
        }
        if (nt_watch_json_add_number(e, "min_us", mn) < 0 || nt_watch_json_add_number(e, "max_us", mx) < 0 ||
            nt_watch_json_add_number(e, "spread_us", mx - mn) < 0 || nt_watch_json_add_number(e, "dump_ts_us", k->dump_ts_us) < 0 ||
            nt_watch_json_add_number(e, "busbw_GBps", nt_jobcall_median_busbw(c, k)) < 0)
            return -1;
    }
    return 0;
}

/* busbw per (collective, size) over time: one point per call of the window, the median over its
 * ranks. */
static int nt_watch_busbw_json(const nt_jobcomm_t *c, cJSON *o)
{
    cJSON *series = cJSON_AddArrayToObject(o, "busbw");
    if (!series)
        return -1;
    uint64_t lo = c->max_seq + 1 > c->window ? c->max_seq + 1 - c->window : 0;
    for (uint64_t s = lo; c->any_seq && s <= c->max_seq; s++) {
        const nt_jobcall_t *k = nt_jobcomm_call(c, s);
        double bw = k ? nt_jobcall_median_busbw(c, k) : NAN;
        if (!isfinite(bw))
            continue;
        cJSON *ser = NULL, *it;
        cJSON_ArrayForEach(it, series)
        {
            const cJSON *b = cJSON_GetObjectItemCaseSensitive(it, "bytes");
            if (strcmp(cJSON_GetObjectItemCaseSensitive(it, "coll")->valuestring, k->op) == 0 &&
                (cJSON_IsNumber(b) ? b->valuedouble == k->bytes : !isfinite(k->bytes)))
                ser = it;
        }
        if (!ser) {
            ser = cJSON_CreateObject();
            if (!ser || !cJSON_AddItemToArray(series, ser))
                return cJSON_Delete(ser), -1;
            if (!cJSON_AddStringToObject(ser, "coll", k->op) || nt_watch_json_add_number(ser, "bytes", k->bytes) < 0 ||
                !cJSON_AddArrayToObject(ser, "points"))
                return -1;
        }
        cJSON *p = cJSON_CreateObject();
        if (!p || !cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(ser, "points"), p))
            return cJSON_Delete(p), -1;
        if (!cJSON_AddNumberToObject(p, "seq", (double)k->seq) ||
            nt_watch_json_add_number(p, "dump_ts_us", k->dump_ts_us) < 0 || nt_watch_json_add_number(p, "busbw_GBps", bw) < 0)
            return -1;
    }
    return 0;
}

static int nt_watch_comm_json(const nt_jobcomm_t *c, cJSON *arr)
{
    cJSON *o = cJSON_CreateObject(), *ranks;
    if (!o || !cJSON_AddItemToArray(arr, o))
        return cJSON_Delete(o), -1;
    int seen = 0;
    for (int i = 0; i < c->nranks; i++)
        seen += c->ranks[i].seen;
    unsigned long complete = 0;
    if (!cJSON_AddStringToObject(o, "id", c->id) || !cJSON_AddStringToObject(o, "name", c->name) ||
        !cJSON_AddNumberToObject(o, "nranks", c->nranks) ||
        !cJSON_AddNumberToObject(o, "ranks_seen", seen) ||
        !cJSON_AddNumberToObject(o, "records", (double)c->records) ||
        !cJSON_AddNumberToObject(o, "cpu_timed_records", (double)c->cpu_timed) ||
        !cJSON_AddNumberToObject(o, "stale_records", (double)c->stale) ||
        !cJSON_AddNumberToObject(o, "duplicate_records", (double)c->duplicate) ||
        !cJSON_AddNumberToObject(o, "max_seq", (double)c->max_seq) ||
        !(ranks = cJSON_AddArrayToObject(o, "ranks")))
        return -1;
    for (int i = 0; i < c->nranks; i++) {
        const nt_jobrank_t *r = &c->ranks[i];
        if (!r->seen)
            continue;
        cJSON *e = cJSON_CreateObject();
        if (!e || !cJSON_AddItemToArray(ranks, e))
            return cJSON_Delete(e), -1;
        if (!cJSON_AddNumberToObject(e, "rank", i) || !cJSON_AddStringToObject(e, "host", r->host) ||
            !(r->pid >= 0 ? cJSON_AddNumberToObject(e, "pid", (double)r->pid)
                          : cJSON_AddNullToObject(e, "pid")) ||
            !cJSON_AddNumberToObject(e, "last_seq", (double)r->last_seq) ||
            !cJSON_AddNumberToObject(e, "records", (double)r->records) ||
            nt_watch_json_add_number(e, "last_dump_ts_us", r->last_dump_ts_us) < 0)
            return -1;
    }
    if (nt_watch_calls_json(c, o, &complete) < 0 || nt_watch_busbw_json(c, o) < 0 ||
        !cJSON_AddNumberToObject(o, "complete_calls", (double)complete))
        return -1;
    return 0;
}

/* The prom textfile of doc written to path ("-" = stdout), replaced whole so that the
 * collector never reads half of it. */
static nt_status_t nt_watch_prom_write(const cJSON *doc, const char *path)
{
    nt_buf_t b;
    nt_buf_init(&b);
    nt_status_t st = nt_render_watch_prom(doc, &b);
    if (st == NT_OK)
        st = nt_buf_write(&b, path);
    else
        fprintf(stderr, "nettune watch: out of memory\n");
    nt_buf_cleanup(&b);
    return st;
}

/* --output: the textfile with --format prom, the JSON document otherwise. */
static nt_status_t nt_watch_output_write(const nt_watch_params_t *p, const cJSON *doc)
{
    if (p->format == NT_WATCH_PROM)
        return nt_watch_prom_write(doc, p->output);
    return nt_output_write_fn(p->output, nt_json_fill, (void *)doc);
}

/* stdout at the end with --format json or prom, when --output did not go there. */
static nt_status_t nt_watch_stdout_write(const nt_watch_params_t *p, const cJSON *doc)
{
    if (p->format == NT_WATCH_PROM)
        return p->output ? NT_OK : nt_watch_prom_write(doc, "-");
    return nt_output_write_fn("-", nt_json_fill, (void *)doc);
}

/* Set by SIGINT and SIGTERM in --follow: the loop ends after the current poll. */
static volatile sig_atomic_t nt_watch_stop;

static void nt_watch_on_signal(int sig)
{
    nt_watch_stop = sig;
}

static double nt_watch_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts); /* the writers' clock: Inspector's gettimeofday */
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* The shortest gap between two reads that a write wakes, in seconds: a job's ranks dump on their
 * own timers, so each of their writes could wake a read, and this bounds how often. */
#define NT_WATCH_WAKE_MIN_S 0.25

/* An inotify descriptor watching --follow's inputs (a directory: writes to its files, files
 * created or moved in; a file: its writes), -1 (errno set) where inotify is not to be had, -2
 * for standard input alone; without one the interval alone paces the reads. */
static int nt_watch_wake_open(const nt_watch_params_t *p)
{
    int files = 0;
    for (int i = 0; i < p->ninputs; i++)
        files += strcmp(p->inputs[i], "-") != 0;
    if (!files)
        return -2; /* standard input only: nothing to watch */
    int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC), n = 0;
    for (int i = 0; fd >= 0 && i < p->ninputs; i++) {
        if (strcmp(p->inputs[i], "-") == 0)
            continue;
        int w = inotify_add_watch(fd, p->inputs[i],
                                  IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO);
        if (w < 0 && errno == ENOENT) {
            /* an input that does not exist yet: its folder, for when it is made (its own
             * writes are then paced by the interval) */
            char dir[4096];
            snprintf(dir, sizeof(dir), "%s", p->inputs[i]);
            char *slash = strrchr(dir, '/');
            if (slash == dir)
                slash[1] = '\0';
            else if (slash)
                *slash = '\0';
            else
                snprintf(dir, sizeof(dir), ".");
            w = inotify_add_watch(fd, dir, IN_CREATE | IN_MOVED_TO);
        }
        n += w >= 0;
    }
    if (fd >= 0 && n == 0) {
        int e = errno;
        close(fd);
        errno = e;
        fd = -1;
    }
    return fd;
}

/* Whether the events waiting on `fd` hold a write to an input (a dot file of a folder is none:
 * the folder's reader skips it). --output is never inside an input folder (refused at the
 * start), so the document's own writes wake nothing. */
static int nt_watch_wake_events(int fd)
{
    int woke = 0;
    char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t got;
    while ((got = read(fd, buf, sizeof(buf))) > 0) {
        for (char *q = buf; q < buf + got;) {
            const struct inotify_event *e = (const struct inotify_event *)q;
            woke |= !e->len || e->name[0] != '.';
            q += sizeof(*e) + e->len;
        }
    }
    return woke;
}

/* --follow's wait after a read that began at `t0` and took `busy` seconds (CLOCK_MONOTONIC):
 * until interval_s seconds have passed since it ended, as without inotify, or sooner when an
 * input is written (`fd`, -1: none), but not before NT_WATCH_WAKE_MIN_S or 4 times the read's
 * own time have passed since it began, so that the watch takes at most about a quarter of a
 * core. A fault is named at the first read after its records were dumped, so waiting out the
 * interval after a dump delays every verdict by up to an interval. After a write the wait goes
 * on until the inputs have been quiet for NT_WATCH_SETTLE_S (at most NT_WATCH_WAKE_MIN_S): ranks
 * that a held call released dump within milliseconds of each other, and a read between two of
 * their writes sees the one ahead and the other silent. `due` (CLOCK_MONOTONIC, NAN: none) is
 * when a rank behind reaches a silence the rules compare with (nt_watch_next_mark_us): the wait
 * ends then too, since nothing is written while the job is blocked behind a stopped rank and a
 * hang waited out the interval after its confirmation (measured on the namespace cluster, 1 s
 * dumps and --interval 1: named 3.2-3.3 of its intervals after its last dump, 2.5 asked).
 * Returns at a signal too. */
#define NT_WATCH_SETTLE_S 0.05
#define NT_WATCH_MARK_PAST_S 0.01
static void nt_watch_wait(const nt_watch_params_t *p, int fd, double t0, double busy, double due)
{
    double until = t0 + busy + p->interval_s,
           earliest = t0 + (4 * busy > NT_WATCH_WAKE_MIN_S ? 4 * busy : NT_WATCH_WAKE_MIN_S),
           woke = -1, last = -1;
    /* A due mark is a moment, not a stream of writes: it waits out the read's own time (4
     * times it) but not the floor that paces reads on writes, which with 0.2 s dumps pushed a
     * hang past its mark by more than an interval (a tester: 3.1-3.3 intervals, 2.5 due). */
    double due_earliest = t0 + fmax(4 * busy, NT_WATCH_SETTLE_S);
    if (due < until)
        until = due > due_earliest ? due : due_earliest;
    while (!nt_watch_stop) {
        double now = nt_clock_s(), target = until;
        if (woke >= 0)
            target = fmin(until, fmax(earliest, fmin(last + NT_WATCH_SETTLE_S,
                                                     woke + NT_WATCH_WAKE_MIN_S)));
        if (now >= target)
            return;
        int ms = 1 + (int)((target - now) * 1000);
        ms = ms > 100 ? 100 : ms; /* a signal is seen within 0.1 s */
        if (fd < 0) {
            usleep((useconds_t)ms * 1000);
            continue;
        }
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        if (poll(&pf, 1, ms) > 0 && (pf.revents & POLLIN) && nt_watch_wake_events(fd)) {
            last = nt_clock_s();
            woke = woke < 0 ? last : woke;
        }
    }
}

/* summary.first_skipped: "path:line" of the first line not read as a record (a line of no
 * JSON, a record that does not parse, a torn one), so that the summary names where; null when
 * every line was read. */
static int nt_watch_first_skipped(cJSON *sum, const nt_watch_input_t *in)
{
    char where[4200];
    if (!in)
        return cJSON_AddNullToObject(sum, "first_skipped") ? 0 : -1;
    snprintf(where, sizeof(where), "%s:%lu", in->path, in->first_bad);
    return cJSON_AddStringToObject(sum, "first_skipped", where) ? 0 : -1;
}

/* A list of paths as a JSON array added to o under key; 0, -1 when out of memory. */
static int nt_watch_paths_json(cJSON *o, const char *key, char *const *paths, size_t n)
{
    cJSON *arr = cJSON_AddArrayToObject(o, key);
    for (size_t i = 0; arr && i < n; i++) {
        cJSON *v = cJSON_CreateString(paths[i]);
        if (!v || !cJSON_AddItemToArray(arr, v))
            return cJSON_Delete(v), -1;
    }
    return arr ? 0 : -1;
}

static int nt_watch_double_compare(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* summary.clock_ahead_us: the median over the ranks of each communicator with an estimate of
 * how far the watch's clock is ahead of their writers' (nt_jobrank_t ahead_us, read delay
 * included), null when none has one (not following, or nothing dumped since the first read);
 * summary.clock_most_off: the rank whose difference taken off is the largest (its host, pid and
 * difference), null when none is beyond the read's delay: a median hides one host off. */
static int nt_watch_clock_json(cJSON *sum, const nt_jobalign_t *a)
{
    size_t n = 0, cap = 0;
    for (size_t ci = 0; ci < nt_jobalign_ncomms(a); ci++)
        cap += (size_t)nt_jobalign_comm(a, ci)->nranks;
    double *v = cap ? malloc(cap * sizeof(double)) : NULL;
    if (cap && !v)
        return -1;
    const nt_jobrank_t *most = NULL; /* the rank whose clock is the furthest off, beyond the delay */
    double most_us = 0;
    for (size_t ci = 0; ci < nt_jobalign_ncomms(a); ci++) {
        const nt_jobcomm_t *c = nt_jobalign_comm(a, ci);
        for (int i = 0; i < c->nranks; i++) {
            const nt_jobrank_t *r = &c->ranks[i];
            if (!r->seen || !isfinite(r->ahead_us))
                continue;
            v[n++] = r->ahead_us;
            double off = nt_watch_rank_ts_us(r, 0.0); /* 0 within the read's own delay */
            if (off != 0 && fabs(off) > fabs(most_us)) {
                most = r;
                most_us = off;
            }
        }
    }
    if (n)
        qsort(v, n, sizeof(double), nt_watch_double_compare);
    double med = n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : NAN;
    free(v);
    if (!(n ? cJSON_AddNumberToObject(sum, "clock_ahead_us", round(med))
            : cJSON_AddNullToObject(sum, "clock_ahead_us")))
        return -1;
    if (!most)
        return cJSON_AddNullToObject(sum, "clock_most_off") ? 0 : -1;
    cJSON *o = cJSON_AddObjectToObject(sum, "clock_most_off");
    return o && cJSON_AddStringToObject(o, "host", most->host) &&
                   cJSON_AddNumberToObject(o, "pid", (double)most->pid) &&
                   cJSON_AddNumberToObject(o, "ahead_us", round(most_us))
               ? 0
               : -1;
}

/* One judgement of everything read so far: the document, its exit code in *code. `ignored` are
 * a directory's files that are not Inspector's (summary.ignored_files); `missing` the inputs that
 * are missing or hold no Inspector file. They and the inputs that could not be read or are not
 * Inspector's are summary.unread_inputs: the judgement is then of the rest, and the code is 2, as
 * for bad input. `now_us` is the watch's clock the judgement is as of (CLOCK_REALTIME, us),
 * NAN when not following. Returns the document, NULL when out of memory. */
static cJSON *nt_watch_document(const nt_watch_params_t *p, nt_watch_input_t *ins, size_t nins,
                                const nt_jobalign_t *a, const nt_watch_model_t *model,
                                const path_list_t *ignored, const path_list_t *missing,
                                double now_us, counts_t *tot, int *code)
{
    cJSON *doc = cJSON_CreateObject(), *inputs, *comms, *findings, *nj, *sum, *settings, *bad;
    nt_watch_outcome_t out = tot->ras_out;
    counts_t keep = *tot;
    *tot = (counts_t){.ras_findings = keep.ras_findings, .ras_out = keep.ras_out,
                      .ras_comms = keep.ras_comms};
    if (!doc || !cJSON_AddStringToObject(doc, "schema", "nettune.watch/1") ||
        !cJSON_AddStringToObject(doc, "nettune_version", nt_version()) ||
        !(settings = nt_watch_settings(p->window)) ||
        !cJSON_AddItemToObject(doc, "settings", settings) ||
        !(inputs = cJSON_AddArrayToObject(doc, "inputs")))
        goto oom;
    for (size_t i = 0; i < nins; i++)
        if ((ins[i].r || ins[i].read || ins[i].cut) && !ins[i].bad && !ins[i].alias &&
            nt_watch_input_json(&ins[i], inputs, tot) < 0)
            goto oom;
    if (!(comms = cJSON_AddArrayToObject(doc, "communicators")))
        goto oom;
    for (size_t i = 0; i < nt_jobalign_ncomms(a); i++)
        if (nt_watch_comm_json(nt_jobalign_comm(a, i), comms) < 0)
            goto oom;
    if (!(findings = cJSON_Duplicate(tot->ras_findings, 1)) ||
        !cJSON_AddItemToObject(doc, "findings", findings) ||
        !(nj = cJSON_AddArrayToObject(doc, "not_judged")) ||
        nt_watch_judge(a, tot->prom, now_us, findings, nj, &out) < 0 ||
        nt_watch_model_judge(model, a, findings, nj, &out) < 0)
        goto oom;
    int unread = missing->n > 0;
    for (size_t i = 0; i < nins; i++)
        unread |= ins[i].bad;
    *code = unread ? NT_EXIT_USAGE : nt_exit_code(0, out.fail > 0, 0, out.warn > 0, p->strict);
    if (!(sum = cJSON_AddObjectToObject(doc, "summary")) ||
        !cJSON_AddNumberToObject(sum, "records", (double)tot->records) ||
        !cJSON_AddNumberToObject(sum, "p2p_records", (double)tot->p2p) ||
        !cJSON_AddNumberToObject(sum, "prom_records", (double)tot->prom) ||
        !cJSON_AddNumberToObject(sum, "ras_records", (double)tot->ras) ||
        !cJSON_AddNumberToObject(sum, "skipped", (double)tot->skipped) ||
        nt_watch_first_skipped(sum, tot->first_skipped) < 0 ||
        !cJSON_AddNumberToObject(sum, "partial", (double)tot->partial) ||
        !cJSON_AddNumberToObject(sum, "unaligned", (double)nt_jobalign_rejected(a)) ||
        nt_watch_clock_json(sum, a) < 0 ||
        !cJSON_AddNumberToObject(sum, "communicators", (double)nt_jobalign_ncomms(a)) ||
        nt_watch_ras_only_json(sum, &tot->ras_comms, a) < 0 ||
        !cJSON_AddNumberToObject(sum, "fail", out.fail) ||
        !cJSON_AddNumberToObject(sum, "warn", out.warn) ||
        !cJSON_AddNumberToObject(sum, "not_judged", cJSON_GetArraySize(nj)) ||
        !cJSON_AddNumberToObject(sum, "exit_code", *code) ||
        !cJSON_AddStringToObject(sum, "exit", nt_exit_code_string(*code)) ||
        nt_watch_paths_json(sum, "ignored_files", ignored->paths, ignored->n) < 0 ||
        nt_watch_paths_json(sum, "unread_inputs", missing->paths, missing->n) < 0 ||
        !(bad = cJSON_GetObjectItemCaseSensitive(sum, "unread_inputs")))
        goto oom;
    for (size_t i = 0; i < nins; i++) {
        cJSON *v = ins[i].bad ? cJSON_CreateString(ins[i].path) : NULL;
        if (ins[i].bad && (!v || !cJSON_AddItemToArray(bad, v)))
            goto oom_v;
        continue;
    oom_v:
        cJSON_Delete(v);
        goto oom;
    }
    return doc;
oom:
    cJSON_Delete(doc);
    return NULL;
}

/* How many inputs the no-record line names; the rest are counted. */
#define NT_WATCH_NAMES_SHOWN 4

/* What one input read without a record held, for the no-record line. */
static void nt_watch_no_record_why(const nt_watch_input_t *in, char *buf, size_t len)
{
    struct stat st;
    if (in->partial && !in->skipped)
        snprintf(buf, len, " (its last line is a record without its end: half-written, waiting "
                           "for its end, or cut)");
    else if (in->partial)
        snprintf(buf, len, " (%lu line(s) not a record, the first at line %lu, and a last record "
                           "without its end: half-written, waiting for its end, or cut)",
                 in->skipped, in->first_bad);
    else if (in->skipped)
        snprintf(buf, len, " (%lu line(s) not a record, the first at line %lu)", in->skipped,
                 in->first_bad);
    else if (strcmp(in->path, "-") != 0 && stat(in->path, &st) == 0 && st.st_size == 0)
        snprintf(buf, len, " (empty)");
    else
        snprintf(buf, len, " (blank)");
}

/* The one line said when nothing read gave a record (without --follow): the files read, the
 * first NT_WATCH_NAMES_SHOWN by name with what each held and the rest counted, the files of a
 * folder that were not read (not Inspector's), and the fix. Inputs given up (`bad`) said their
 * own line already and are not named again; with none read, nothing is said. */
static void nt_watch_no_record_say(const nt_watch_input_t *ins, size_t nins,
                                   const path_list_t *ignored)
{
    size_t nread = 0, shown = 0;
    int partial = 0;
    char names[4096], why[256], more[64] = "";
    size_t k = 0;
    names[0] = '\0';
    for (size_t i = 0; i < nins; i++) {
        if (ins[i].bad || ins[i].alias)
            continue;
        nread++;
        partial |= ins[i].partial > 0;
        if (shown == NT_WATCH_NAMES_SHOWN || k >= sizeof(names))
            continue;
        nt_watch_no_record_why(&ins[i], why, sizeof(why));
        int w = snprintf(names + k, sizeof(names) - k, "%s%s%s", shown ? ", " : "", ins[i].path, why);
        k += w > 0 ? (size_t)w : 0;
        shown++;
    }
    if (!nread)
        return;
    if (nread > shown)
        snprintf(more, sizeof(more), ", and %zu more", nread - shown);
    char skipped[1100] = "";
    if (ignored->n) {
        char list[1000];
        nt_watch_names(ignored, 0, list, sizeof(list));
        snprintf(skipped, sizeof(skipped), "; not read, not Inspector dumps: %s", list);
    }
    fprintf(stderr, "nettune watch: no Inspector record in %zu file(s): %s%s%s: %s\n", nread,
            names, more, skipped,
            partial ? "a dump still being written is read once its line ends: run again when "
                      "Inspector has finished it, or with --follow (a file cut short holds no "
                      "whole record)"
                    : "was the job run with NCCL_INSPECTOR_ENABLE=1, and has it dumped yet "
                      "(docs/watch.md)?");
}

/* Opens the inputs not yet open: in --follow a directory gains files as ranks start dumping.
 * `ignored` is refilled with the directories' files that are not Inspector's; the inputs that are
 * missing or hold nothing to read are each said in one line when `say`, and added to `missing`
 * when it is not NULL. Returns how many there are, -1 when out of memory. */
static int nt_watch_inputs_scan(const nt_watch_params_t *p, nt_watch_input_t **ins, size_t *nins,
                                path_list_t *ignored, path_list_t *missing, int quiet_empty,
                                int say)
{
    path_list_t files = {0}, known = {0};
    int rc = 0, nbad = 0;
    for (size_t i = 0; i < ignored->n; i++)
        free(ignored->paths[i]);
    ignored->n = 0;
    /* The inputs already open, sorted for the lookup: a folder of thousands of ranks' files is
     * not opened again at every poll to tell its content. */
    if (*nins && !(known.paths = malloc(*nins * sizeof(char *))))
        return -1;
    for (size_t i = 0; i < *nins; i++)
        known.paths[known.n++] = (*ins)[i].path;
    if (known.n) /* qsort's base may not be NULL, even for 0 elements */
        qsort(known.paths, known.n, sizeof(char *), nt_watch_str_compare);
    for (int i = 0; rc == 0 && i < p->ninputs; i++) {
        int c = nt_watch_input_collect(p->inputs[i], &files, ignored, &known, quiet_empty, say);
        if (c == -2 || (c == -1 && missing && nt_watch_paths_add(missing, p->inputs[i]) < 0))
            rc = -1;
        nbad += c == -1;
    }
    for (size_t i = 0; rc == 0 && i < files.n; i++) {
        size_t k = 0;
        while (k < *nins && strcmp((*ins)[k].path, files.paths[i]) != 0)
            k++;
        if (k < *nins)
            continue;
        nt_watch_input_t *t = realloc(*ins, (*nins + 1) * sizeof(**ins));
        if (!t) {
            rc = -1;
            break;
        }
        *ins = t;
        /* A followed file renamed in its folder (rotation) is read on under its first name,
         * through the descriptor held: under the new one it is not read again. */
        struct stat st;
        int alias = 0, known = p->follow && stat(files.paths[i], &st) == 0;
        for (size_t j = 0; known && j < *nins && !alias; j++) {
            const nt_watch_input_t *o = &(*ins)[j];
            alias = o->ino && ((st.st_dev == o->dev && st.st_ino == o->ino) ||
                               (st.st_dev == o->old_dev && st.st_ino == o->old_ino));
            for (int g = 0; !alias && g < o->ngone && g < NT_WATCH_GONE; g++)
                alias = st.st_dev == o->gone_dev[g] && st.st_ino == o->gone_ino[g];
        }
        (*ins)[(*nins)++] = (nt_watch_input_t){.path = files.paths[i], .read = alias,
                                               .alias = alias, .late = p->follow && !say};
        files.paths[i] = NULL;
    }
    for (size_t i = 0; i < files.n; i++)
        free(files.paths[i]);
    free(files.paths);
    free(known.paths); /* the paths are the inputs' own */
    return rc < 0 ? -1 : nbad;
}

int nt_watch_run(const nt_watch_params_t *p)
{
    counts_t tot = {0};
    int code = NT_EXIT_USAGE, bad = 0, wake = -1;
    nt_watch_input_t *ins = NULL;
    size_t nins = 0;
    path_list_t ignored = {0}, missing = {0};
    cJSON *doc = NULL;
    tot.ras_findings = cJSON_CreateArray();
    nt_jobalign_t *a = nt_jobalign_create(p->window, NT_WATCH_MAX_RANKS);
    nt_watch_model_t *model = NULL;
    if (!a || !tot.ras_findings)
        goto oom;
    if (p->report) {
        char err[512];
        if (!(model = nt_watch_model_open(p->report, err, sizeof(err)))) {
            if (err[0])
                fprintf(stderr, "nettune watch: %s\n", err);
            goto done;
        }
    }
    if (p->follow) {
        /* --follow keeps every rank's file open: as many descriptors as the system allows. */
        struct rlimit nofile;
        if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
            nofile.rlim_cur = nofile.rlim_max;
            setrlimit(RLIMIT_NOFILE, &nofile);
        }
        struct sigaction sa = {.sa_handler = nt_watch_on_signal};
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
    }
    wake = p->follow ? nt_watch_wake_open(p) : -1;
    if (p->follow && wake == -1)
        fprintf(stderr,
                "nettune watch: cannot watch the inputs for writes (inotify: %s): reading every "
                "%u s (--interval); raise fs.inotify.max_user_instances or max_user_watches for "
                "reads on each dump\n",
                strerror(errno), p->interval_s);
    for (unsigned long poll = 1;; poll++) {
        double t0 = nt_clock_s();
        /* In --follow an empty directory is waited on; without it, it is an error. An input
         * that is missing, or is not Inspector's, is said once in one line and the others are
         * judged: the document is written (partial, exit 2) when something was read. */
        int nmiss = nt_watch_inputs_scan(p, &ins, &nins, &ignored, poll == 1 ? &missing : NULL,
                                         p->follow, poll == 1);
        if (nmiss < 0)
            goto oom;
        if (poll == 1 && missing.n == (size_t)p->ninputs && !p->follow)
            goto done; /* nothing to read */
        /* An input missing at the start that --follow has since found is read, no longer
         * missing: the inputs collected above hold its files. */
        for (size_t i = 0; i < missing.n; i++) {
            struct stat st;
            if (poll > 1 && stat(missing.paths[i], &st) == 0) {
                free(missing.paths[i]);
                missing.paths[i--] = missing.paths[--missing.n];
            }
        }
        bad = missing.n > 0;
        /* While following, the judgement is as of the start of the reads: a rank's silence is
         * known only up to when its file was read, and a read of thousands of files, or one
         * starved of CPU, takes a while (a tester's watch at nice 19 beside 8 spinning
         * processes read one rank's file 0.8 s before another's, and named the first a hang
         * when silence was counted to the end of the reads). */
        double now_us = p->follow ? nt_watch_now_us() : NAN, now_s = nt_clock_s();
        for (size_t i = 0; i < nins; i++) {
            int rc = nt_watch_file_read(&ins[i], a, &tot, p->follow);
            if (rc < 0)
                goto oom;
            bad |= ins[i].bad;
        }
        cJSON_Delete(doc);
        if (!(doc = nt_watch_document(p, ins, nins, a, model, &ignored, &missing, now_us, &tot, &code)))
            goto oom;
        if (!p->follow && !tot.records) {
            nt_watch_no_record_say(ins, nins, &ignored);
            code = NT_EXIT_USAGE;
            goto done;
        }
        if (p->output && nt_watch_output_write(p, doc) != NT_OK) {
            code = NT_EXIT_USAGE; /* the writer logged the path and the reason */
            goto done;
        }
        int live = 0; /* an input that --follow may still find more in */
        for (int i = 0; i < p->ninputs && !live; i++)
            live = strcmp(p->inputs[i], "-") != 0;
        for (size_t i = 0; i < nins && !live; i++)
            live = !ins[i].read;
        if (!p->follow || nt_watch_stop || (p->polls && poll >= p->polls) || !live)
            break;
        /* The next mark is on the watch's wall clock; the wait is on the monotonic one, taken
         * together with it. A read a little past the mark sees it reached. */
        double mark_us = nt_watch_next_mark_us(a, now_us),
               due = isfinite(mark_us) ? now_s + (mark_us - now_us) / 1e6 + NT_WATCH_MARK_PAST_S
                                       : NAN;
        nt_watch_wait(p, wake, t0, nt_clock_s() - t0, due);
    }
    if (!p->quiet && p->format != NT_WATCH_TEXT && !(p->output && strcmp(p->output, "-") == 0) &&
        nt_watch_stdout_write(p, doc) != NT_OK)
        code = NT_EXIT_USAGE;
    else if (!p->quiet && p->format == NT_WATCH_TEXT) {
        nt_buf_t b;
        nt_buf_init(&b);
        if (nt_render_watch_text(doc, &b) != NT_OK)
            goto oom;
        fputs(b.data ? b.data : "", p->output && strcmp(p->output, "-") == 0 ? stderr : stdout);
        nt_buf_cleanup(&b);
    }
    if (bad && p->drain != NT_WATCH_DRAIN_OFF)
        fprintf(p->format == NT_WATCH_TEXT ? stdout : stderr,
                "drain: nothing drained: an input was not read, and a partial judgement drains no "
                "node (fix the input and run again)\n");
    else if (nt_watch_drain(p, doc) < 0 && code == NT_EXIT_OK)
        code = NT_EXIT_FAIL;
    goto done;
oom:
    fprintf(stderr, "nettune watch: out of memory\n");
    code = NT_EXIT_USAGE;
done:
    if (wake >= 0)
        close(wake);
    for (size_t i = 0; i < nins; i++) {
        nt_jobreader_close(ins[i].r);
        nt_jobreader_close(ins[i].old_r);
        free(ins[i].path);
    }
    free(ins);
    for (size_t i = 0; i < ignored.n; i++)
        free(ignored.paths[i]);
    for (size_t i = 0; i < missing.n; i++)
        free(missing.paths[i]);
    free(ignored.paths);
    free(missing.paths);
    nt_jobalign_destroy(a);
    nt_watch_model_close(model);
    cJSON_Delete(tot.ras_findings);
    for (size_t i = 0; i < tot.ras_comms.n; i++)
        free(tot.ras_comms.paths[i]);
    free(tot.ras_comms.paths);
    cJSON_Delete(doc);
    return code;
}

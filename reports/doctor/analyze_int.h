/* Internal state shared by the stages of the pipeline (facts.c says which file is which). Everything here is bounded: each
 * list has a cap, past which only counts grow, so memory does not depend on the log's size. */
#ifndef NT_DOCTOR_ANALYZE_INT_H
#define NT_DOCTOR_ANALYZE_INT_H

#include "doctor.h"
#include "nettune/nccltests.h"
#include "nettune/nccllog.h"

#define NT_MAX_INPUTS 100000
#define NT_MAX_SET 65536    /* hosts, processes, env names, versions ... */
#define NT_MAX_RANK 1048576 /* highest rank number tracked per rank */
#define NT_MAX_TABLES 256
#define NT_TOP_ROWS 3 /* "largest sizes": the plateau is judged on the 3 largest */
/* The smallest largest size a sweep needs for its busbw to be judged: in the fixtures busbw at
 * 256 MiB is 95% (2 nodes x 8 H100, ring) and 87% (1 node, NVLS) of the plateau at 4-8 GiB, at
 * 512 MiB 97% and 91%: from 512 MiB the figure is within the 0.90 warn ratio of the plateau.
 * docs/doctor-inputs.md (nccl-tests outputs). */
#define NT_PLATEAU_MIN_BYTES (512ULL << 20)
#define NT_MAX_LINKS 8
#define NT_FACT_EV 64   /* hosts, networks, transports with their first line as evidence */
#define NT_ROW_TEXTS 64 /* row lines kept per table as evidence (a sweep has ~30 sizes) */

typedef struct {
    unsigned input;     /* index into d->inputs */
    unsigned long line; /* 1-based */
    char *text;         /* the line, cut to NT_EVIDENCE_TEXT bytes */
} nt_ev_t;

#define NT_EVIDENCE_TEXT 300

typedef struct {
    nt_ev_t ev[NT_EVIDENCE_MAX];
    size_t n;
    unsigned long total;
} nt_evlist_t;

/* A string-keyed hash map to a small integer payload; insertion order kept in `order`. */
typedef struct {
    char **keys; /* by insertion order */
    long *vals;  /* by insertion order, free for the user */
    size_t n, kcap;
    size_t *slots;         /* hash slots: insertion index + 1, 0 = empty */
    size_t cap;            /* number of slots, a power of two */
    unsigned long dropped; /* inserts refused at NT_MAX_SET */
} nt_map_t;

typedef struct {
    char *path;
    const char *status; /* "ok", "unreadable", "binary", "empty", "no_nccl_lines", "read_error" */
    char *message;
    unsigned long lines, nccl_lines, truncated;
    uint64_t bytes, nul_bytes; /* nul_bytes: NUL padding skipped by the reader */
    unsigned long op_lines;    /* lines of operator files (read_operator.c) */
    int gzip;                  /* read through zlib from a gzip file */
    char *host;                /* --host for this input, or NULL */
    nt_nccllog_t *log;         /* lib/nccllog.c facts of this input (NIC speeds, TUNING lines) */
    /* completeness: a whole log starts at NCCL's version banner or the launcher's start */
    int start;                 /* 0 nothing read yet, 1 whole, 2 an excerpt */
    unsigned long inits, completes; /* communicator init lines, "Init COMPLETE" lines */
    unsigned long outcomes;    /* results and errors: rows, WARN lines, errors, timeouts */
    unsigned long pg_inits;    /* PyTorch "ProcessGroupNCCL initialized" lines */
    int last_error;            /* the previous line was PyTorch's "Last error:" */
    char last[NT_EVIDENCE_TEXT + 1]; /* the last line with text ("..." gaps left out) */
    unsigned long last_no;
} nt_input_t;

typedef struct {
    char *id;           /* "host:pid" or "task N" */
    unsigned input;     /* the input it first appears in */
    char *host;         /* may be NULL */
    char *tuner;        /* external tuner plugin name, or NULL */
    int tuner_internal; /* printed "TUNER/Plugin: Could not find" / internal tuner */
    int init_seen;      /* printed communicator init lines */
    int complete;       /* printed "Init COMPLETE": it has read every variable init reads */
    nt_map_t env;       /* the NCCL_* names this process echoed */
    int ranks[4];
    int nranks;
    nt_ev_t first_tuner;  /* evidence of its tuner line, text NULL if none */
    char *tuning;         /* nettune's tuning file as the plugin logged it: "'path' fnv1a64 HASH" */
    char tuning_hash[17]; /* its fnv1a64 (16 hex digits): ranks compare on it, not on the path */
    nt_ev_t tuning_ev;    /* that line, text NULL if none */
    nt_ev_t tuning_none_ev; /* nettune's plugin said it uses no file ("no tuning file",
                               "ignoring tuning file", "cannot use tuning file"), text NULL if not */
    nt_ev_t first_init;
} nt_proc_t;

typedef struct {
    unsigned long long bytes;
    double busbw_oop, busbw_ip;
    double algbw_oop; /* busbw / algbw is the factor nccl-tests applied: it names the collective */
    unsigned long long count;
    int typesize; /* bytes per element of the type column, 0 unknown */
    int redop;    /* 1 a reduction (sum, prod, ...), 0 none or empty, -1 no redop column seen */
    long root;    /* the root column, -1 when absent or -1 */
    unsigned input;
    unsigned long line;
    char *text;
} nt_row_t;

typedef struct {
    size_t sweep; /* the table in the nccl-tests reader (every row): nt_ncclt_reader_table */
    unsigned input;
    unsigned long header_line;
    char *coll;              /* "all_reduce", ... or NULL */
    const char *coll_source; /* "log" (command line, "# Collective test starting"), "expect",
                                "table" (inferred) or NULL */
    char *coll_note; /* how the collective was inferred, or the candidates when the table fits
                        several */
    int nranks, nhosts, gpus_per_host; /* from the "Using devices" block, -1 unknown */
    char *gpu_model;
    char *algo;                /* NCCL_ALGO seen before the table, or NULL */
    nt_row_t top[NT_TOP_ROWS]; /* largest sizes, descending */
    size_t ntop;
    unsigned long rows;
    double avg_busbw; /* "# Avg bus bandwidth", -1 if absent: shown, never judged */
    int complete;
    /* filled by the diagnosis */
    double plateau, expected, ratio, network_GBps;
    const char *verdict;          /* "pass", "warn", "fail", "not_judged" */
    char *basis;                  /* how `expected` was computed, or why there is no verdict */
    const char *not_judged;       /* why busbw is not judged, as the first line says it, or NULL */
    char not_judged_buf[400];     /* not_judged when it names the table's own figures */
    unsigned long long max_bytes; /* the run header's maxBytes (-e), 0 unknown */
    nt_ev_t run_ev;               /* the run header ("# nThread ... maxBytes"), text NULL if none */
    nt_ev_t cut_ev; /* a row cut mid-line after the last full row, text NULL if none */
    nt_ev_t oob_ev; /* "# Out of bounds values : N FAILED|OK", text NULL if none */
    /* the text of the first NT_ROW_TEXTS rows, by line, for evidence of sweep findings */
    char *rowtext[NT_ROW_TEXTS];
    unsigned long rowline[NT_ROW_TEXTS];
    size_t nrowtext;
} nt_table_t;

/* A PyTorch ProcessGroupNCCL watchdog timeout: "[Rank 3] Watchdog caught collective operation
 * timeout: WorkNCCL(SeqNum=12, OpType=ALLREDUCE, ...)" (torch/csrc/distributed/c10d/
 * ProcessGroupNCCL.cpp, WorkNCCL::checkTimeout). */
#define NT_TIMEOUTS 64
typedef struct {
    long rank; /* -1 unknown */
    long seq;  /* -1 unknown */
    long timeout_ms; /* the WorkNCCL's Timeout(ms), -1 unknown */
    char op[32];
    nt_ev_t ev;
} nt_timeout_t;

/* A finding as reported. */
typedef struct {
    const nt_kb_finding_t *kb;
    nt_severity_t severity;
    nt_evlist_t ev;
    nt_map_t hosts;
    int ranks[32];
    size_t nranks;
    unsigned long ranks_total;
    char *detail;
    char *fix; /* kb fix with placeholders filled; NULL = kb->fix */
    const char *caused_by[NT_MAX_LINKS];
    size_t ncaused_by;
    const char *causes[NT_MAX_LINKS];
    size_t ncauses;
    const char *related[NT_MAX_LINKS];
    size_t nrelated;
    cJSON *values; /* object of numbers, or NULL */
} nt_finding_t;

typedef struct {
    nt_evlist_t ev;
    nt_map_t hosts;
    unsigned long count;
} nt_sighit_t;

typedef struct {
    char *name, *value;
    int from_cmdline;
    int mismatch;
    char *other;
    nt_ev_t first, first_other;
} nt_env_t;

/* ---- operator files (read_operator.c) --------------------------------------------------------- */

#define NT_OP_MAX 1024 /* ports, GPUs, kernel events, topologies kept; past it only counts */
#define NT_TOPO_COLS 48

/* One RDMA port from ibv_devinfo or ibstat. */
typedef struct {
    char *host; /* NULL: the file does not say */
    unsigned input;
    char hca[32];
    int port;
    char state[24];   /* "PORT_ACTIVE", "PORT_DOWN" (ibv_devinfo) or "Active", "Down" (ibstat) */
    char phys[24];    /* "LINK_UP", "DISABLED", "POLLING" / "LinkUp", "Disabled", ""; */
    double rate_Gbps; /* width x lane speed, or ibstat's Rate; -1 unknown */
    char width[8], speed[24];
    long sm_lid;    /* -1 unknown */
    char layer[16]; /* "InfiniBand", "Ethernet", "" */
    nt_ev_t ev;     /* the port's first line; ev_state its state line */
    nt_ev_t ev_state, ev_phys, ev_rate;
} nt_opport_t;

/* One nvidia-smi topo -m matrix. */
typedef struct {
    char *host;
    unsigned input;
    int ncols, nrows;
    char col[NT_TOPO_COLS][24];
    char row[NT_TOPO_COLS][24];
    char path[NT_TOPO_COLS][NT_TOPO_COLS][8];
    unsigned long line[NT_TOPO_COLS];
    char *text[NT_TOPO_COLS];       /* the row's line, for evidence */
    char nicname[NT_TOPO_COLS][32]; /* "NIC Legend" names, by column */
    unsigned long header_line;
    int done;
} nt_optopo_t;

typedef struct {
    char *host;
    int gpu;
    int active, inactive;
    nt_ev_t ev_gpu, ev_inactive;
} nt_opnvl_t;

typedef struct {
    char *host;
    char pci[32];
    int xid;
    nt_ev_t ev;
} nt_opxid_t;

typedef struct {
    char *host;
    char dev[64];
    int downs, ups, last_down;
    nt_ev_t ev_down, ev_up;
} nt_oplink_t;

typedef struct {
    char *host;
    unsigned input;
    void *xml; /* nt_ncclxml_t */
    char *buf; /* the file's text (line lookup for evidence) */
    size_t len;
} nt_opxml_t;

/* systemctl status of nvidia-fabricmanager: the unit's state on one host. */
typedef struct {
    char *host;
    char state[64]; /* "failed (Result: exit-code)", "active (running)", ... */
    int down;       /* not active: CUDA cannot start on an NVSwitch system */
    nt_ev_t ev;     /* the "Active:" line */
} nt_opunit_t;

/* An input that is the switches' view of the fabric (ibnetdiscover or iblinkinfo output, read
 * whole by lib/node/ibtopo.c at the end of the input): what it holds, for the summary. */
typedef struct {
    unsigned input;
    const char *format; /* "ibnetdiscover" or "iblinkinfo" */
    size_t switches, leaves, hosts;
    char why[160]; /* "" when read, else why it could not be (no switch section, ...) */
} nt_opibt_t;

/* Parser state of one host within one input (pdsh interleaves hosts line by line). */
typedef struct {
    char *host;
    int mode;  /* OP_* in read_operator.c */
    long port; /* index into ports, -1 */
    char hca[32];
    long topo; /* index into topos, -1 */
    long nvl;  /* index into nvl, -1 */
    int nic_legend;
} nt_opstate_t;

typedef struct {
    nt_opport_t *ports;
    size_t nports, cap_ports;
    nt_optopo_t *topos;
    size_t ntopos, cap_topos;
    nt_opnvl_t *nvl;
    size_t nnvl, cap_nvl;
    nt_opxid_t *xids;
    size_t nxids, cap_xids;
    unsigned long xids_total;
    nt_oplink_t *links;
    size_t nlinks, cap_links;
    nt_opxml_t *xmls;
    size_t nxmls, cap_xmls;
    nt_opibt_t *ibts;
    size_t nibts, cap_ibts;
    nt_opunit_t *fms;
    size_t nfms, cap_fms;
    /* the input being read */
    nt_opstate_t *st;
    size_t nst, cap_st;
    int pdsh;         /* -1 undecided, 0 no, 1 lines carry "host: " prefixes */
    char *block_host; /* dshbak: the host of the current block */
    int dsh_state;    /* dshbak header: 0 none, 1 after the first rule, 2 after the host */
    char *dsh_pending;
    char *input_host;  /* --host */
    char *prompt_host; /* "user@host:...$" prompt line */
    int xml;           /* the input is XML: collected in xml_buf */
    char *xml_buf;
    size_t xml_len, xml_cap;
    char *ibt_buf; /* the input's ibnetdiscover / iblinkinfo lines, read whole at its end */
    size_t ibt_len, ibt_cap;
    int seen_content;
    unsigned long op_lines;
    struct nt_nodefiles *nodefiles; /* ulimit -a, df, lsmod, nvidia-smi -q, lspci -vvv facts
                                     * (read_nodefiles.c), freed by nodefiles_free */
    void (*nodefiles_free)(nt_doctor_t *d);
} nt_op_t;

struct nt_doctor {
    const nt_kb_t *kb;
    nt_input_t *inputs;
    size_t ninputs, cap_inputs;
    unsigned cur;      /* input being read */
    unsigned long seq; /* global line counter */

    nt_sighit_t *sig;   /* one per kb signature */
    unsigned *sig_seen; /* per signature: the line (sig_gen) it last matched */
    unsigned sig_gen;
    unsigned long labels_seen; /* launcher-label table rows (bit i: nt_line_prefix_at(i)) seen */
    int pdsh_row;              /* the table's pdsh row (a file of pdsh lines has its labels
                                  stripped by the operator reader, not the line parser) */
    nt_sighit_t *msg;   /* one per kb message (NCCL format string) */
    cJSON **msg_values; /* per kb message: the named conversions of its first line, or NULL */
    int sig_acs, sig_iommu, sig_failure, sig_wc;
    int sig_plugin; /* lines that only show an NCCL job (plugins, PyTorch), explain nothing */
    unsigned long wc_count[32];
    nt_ev_t wc_first[32];
    unsigned long wc_vendor[32];

    nt_map_t hosts;
    nt_map_t procmap;
    nt_proc_t *procs;
    size_t nprocs, cap_procs;

    int *rank_host; /* rank -> index into hosts.order position + 1, 0 unknown */
    size_t cap_rank_host;

    nt_map_t versions;
    nt_ev_t version_ev[4];
    nt_map_t networks;
    nt_evlist_t socket_ev;
    nt_evlist_t netib_ev;
    int nics_min, nics_max;
    char *nic_names;
    nt_map_t transports;

    nt_env_t *env;
    size_t nenv, cap_env;

    int nranks, nnodes, local_ranks;
    /* communicator lines naming a rank already seen on another host (separate jobs, or
     * sub-communicators whose ranks restart at 0) */
    nt_evlist_t rank_other_host_ev;
    nt_evlist_t footer_ev; /* nccl-tests' "# Avg bus bandwidth" lines, one per test run */
    /* footers that followed another footer of the same input with no run or table started
     * between them: the ends of runs that went on at once, not one after another */
    unsigned long footers_together;
    unsigned footer_input;  /* the input of the last footer, +1 (0: none yet) */
    int run_since_footer;   /* a run's header or a table's started since the last footer */
    nt_ev_t comm_ev;
    nt_ev_t nranks_ev; /* the first line naming nranks ("... nranks 16 ... Init COMPLETE") */

    /* network connections and GPUDirect RDMA per local rank: bit 0 with GDR, bit 1 without */
    unsigned char *gdr;
    size_t cap_gdr;
    nt_evlist_t gdr_yes_ev, gdr_no_ev, gdr0_ev, shared_ev;
    unsigned long net_conns;

    /* P2P hang: the last P2P connection and the last sign of progress after it */
    unsigned long last_p2p_seq, last_progress_seq;
    nt_ev_t last_p2p;
    int tests_started;

    nt_evlist_t warn_unexplained;

    /* PyTorch: watchdog timeouts, and the ranks whose process group was initialized */
    nt_timeout_t timeouts[NT_TIMEOUTS];
    size_t ntimeouts;
    unsigned long timeouts_total;
    unsigned long timeout_line; /* the line of the last timeout (its WorkNCCL may follow) */
    nt_map_t pg_ranks;
    nt_ev_t pg_ev;
    /* PyTorch's flight recorder (torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp): the
     * smallest TORCH_NCCL_TRACE_BUFFER_SIZE and TORCH_NCCL_DUMP_ON_TIMEOUT the "ProcessGroupNCCL
     * environments:" lines print (-1: no line, or the version does not print it) and the first
     * such line; "Stack trace of the failed collective not found, potentially because
     * FlightRecorder is disabled" (WorkNCCL::printTraceback); the ranks whose own watchdog
     * signalled the dump, "First PG on this rank to signal dumping." (broadcastDumpSignal), and
     * the lines of ranks that only observed another rank's signal ("Observed flight recorder
     * dump signal from another rank via TCPStore."); the rank a "Received a dump signal due to a
     * collective timeout from  rank N" names (-1 none; "from this local rank": the line's own);
     * and lines showing the recorder on (a stack trace of the failed collective, a dump made) */
    long fr_buffer, fr_dump;
    nt_ev_t fr_env_ev;
    nt_evlist_t fr_off_ev, fr_first_ev, fr_observed_ev, fr_on_ev;
    nt_map_t fr_first_ranks, fr_observed_ranks;
    long fr_src_rank;

    /* nccl-tests: lib/nccltests.c reads the tables; the doctor keeps its judgement per table */
    nt_ncclt_reader_t *ncclt;
    nt_table_t *tables;
    size_t ntables;
    unsigned long tables_dropped;
    nt_table_t *open_table; /* table receiving rows, or NULL */
    nt_ev_t run_ev;         /* the last run header ("# nThread ..."), text NULL if none */
    /* run context (reset by each "# nThread" header) */
    char *run_algo;
    nt_map_t run_hosts;
    int run_ranks;
    unsigned run_input;

    /* --report */
    char *report_path;
    int report_active_ports;
    nt_evlist_t report_ev;
    nt_map_t report_hosts; /* the hosts with ACTIVE RDMA ports */
    /* the report's hardware, applied by the diagnosis only where the report is of the log's
     * hosts (rules.c nt_report_hardware); -1 / NULL = the report does not say */
    int report_gpus, report_nics;
    double report_rate_Gbps;
    char *report_model;
    nt_map_t report_all_hosts;             /* every node of the report */
    const char *report_hw_unused;          /* why its hardware was not used, or NULL */
    char report_hw_unused_buf[320];

    nt_op_t op;
    /* the first line naming each host, network and transport (evidence of the job's facts) */
    nt_ev_t host_ev[NT_FACT_EV], net_ev[NT_FACT_EV], tr_ev[NT_FACT_EV];
    const char *cur_line; /* the line being read */
    /* runs not judged: reasons (one per kind), set by the diagnosis */
    char *not_judged[8];
    size_t nnot_judged;
    cJSON *per_file; /* findings of single inputs the joint diagnosis lacks (main.c), or NULL */
    const char *next_host; /* --host for the next input read (borrowed) */

    /* results */
    nt_finding_t *findings;
    size_t nfindings; /* room for kb->nfindings, allocated at the first (nt_finding_add) */
    nt_hw_t hw; /* hardware used for the verdicts (merged) */
    int diagnosed;
};

/* Makes `m` an empty map (no allocation until the first put). */
void nt_map_init(nt_map_t *m);
/* Frees the keys and tables of `m` and leaves it empty; an empty map is fine. */
void nt_map_cleanup(nt_map_t *m);
/* Returns the insertion index of `key` (adding it with value 0 if new), or -1 when the map is
 * full (NT_MAX_SET) or out of memory. */
long nt_map_put(nt_map_t *m, const char *key, size_t len);
/* Insertion index of `key`, or -1. */
long nt_map_find(const nt_map_t *m, const char *key, size_t len);

/* Sets `e` to (input, line) and a copy of `text` cut to NT_EVIDENCE_TEXT bytes, freeing the old
 * text; input (unsigned)-1 means the --report file (line 0). On out of memory e->text is NULL. */
void nt_ev_set(nt_ev_t *e, unsigned input, unsigned long line, const char *text);
/* Frees the text of `e`. */
void nt_ev_free(nt_ev_t *e);
/* Adds an evidence line to `l` unless the same (input, line) is there; past NT_EVIDENCE_MAX
 * lines only `total` grows. */
void nt_evlist_add(nt_evlist_t *l, unsigned input, unsigned long line, const char *text);
/* Same, from an evidence entry (ignored when it holds no text). */
void nt_evlist_add_ev(nt_evlist_t *l, const nt_ev_t *e);
/* Frees the texts of `l`. */
void nt_evlist_free(nt_evlist_t *l);
/* Whether two host names are the same: both unknown (NULL), or equal strings. */
int nt_host_eq(const char *a, const char *b);
/* Adds a "not judged" reason ("busbw (NIC rate unknown ...)") once; at most 8 are kept. */
void nt_not_judged_add(nt_doctor_t *d, const char *reason);
/* A host name for text: `h`, or "unknown host" for NULL. */
const char *nt_host_name(const char *h);
/* Whether an nvidia-smi topo -m column label names a GPU ("GPU0"), not a NIC or CPU column. */
int nt_topo_col_is_gpu(const char *c);

/* The finding `key` of this diagnosis, created with the knowledge base's text and default
 * severity if it is not there yet; NULL if the knowledge base has no such key or out of memory.
 * The address stays valid for the life of `d` (room for every finding of the knowledge base is
 * allocated at the first call), so a rule may hold one finding while it adds another. */
nt_finding_t *nt_finding_add(nt_doctor_t *d, const char *key);

/* read_operator.c: called by read_log.c for every line of an input before it is read as an NCCL log.
 * nt_op_begin/end bracket one input; nt_op_line returns 1 when the line was an operator file's
 * (then it is not read further), and may replace *body with the line without a pdsh prefix, and
 * *host with the host the line belongs to. */
void nt_op_begin(nt_doctor_t *d, const char *host);
/* read_nodefiles.c: nt_nodefiles_line - 1 when line (body b) is a line of ulimit -a, df, lsmod,
 * nvidia-smi -q or lspci -vvv, its facts kept for host; nt_nodefiles_diagnose - the probe's
 * node-check rules on them, as findings (the op's nodefiles_free frees what they hold). */
int nt_nodefiles_line(nt_doctor_t *d, const char *host, const char *b, const char *line);
void nt_nodefiles_diagnose(nt_doctor_t *d);
/* nt_nodefiles_text - one line per host of the operator-file summary: checks judged, passed
 * and not judged (with the first reason). */
void nt_nodefiles_text(const nt_doctor_t *d, FILE *out);

/* nt_nodefiles_any - whether nt_nodefiles_text has a line to print: a host of the node files
 * (ulimit -a, df, lsmod, nvidia-smi -q, lspci -vvv) with a check judged or not judged. */
int nt_nodefiles_any(const nt_doctor_t *d);
int nt_op_line(nt_doctor_t *d, const char *line, const char **body, const char **host);
/* Ends the input; returns 1 if it held operator content (so it is usable), with a message in msg
 * when the content could not be read (bad XML). */
int nt_op_end(nt_doctor_t *d, char *msg, size_t msglen, int *bad);
void nt_op_free(nt_doctor_t *d);
/* The findings of the operator files (ports, topology, NVLink, kernel log, XML). */
void nt_op_diagnose(nt_doctor_t *d);
/* hardware.operator of the JSON document, and the text section. */
cJSON *nt_op_json(const nt_doctor_t *d);
void nt_op_text(const nt_doctor_t *d, FILE *out);

/* nt_finding_detail - append one sentence (printf format) to f->detail, space-separated;
 * detail stops growing past 8,000 characters; allocation failure leaves it as it was.
 * nt_finding_value - set values.<name> = v (replacing an earlier one). Shared by the log
 * diagnosis (diagnose.c) and the operator files (read_operator.c). */
void nt_finding_detail(nt_finding_t *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void nt_finding_value(nt_finding_t *f, const char *name, double v);

#endif

/* Run summary written at finalize/destroy (see nt_plugin.h). */
#include "nt_plugin.h"

#include <cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int nt_report_expand(const char *tmpl, const char *host, long pid, const char *comm, char *out,
                     size_t outlen) {
  size_t n = 0;
  int ok = 1;
  char pidbuf[24];
  snprintf(pidbuf, sizeof(pidbuf), "%ld", pid);
  for (const char *s = tmpl; *s; s++) {
    const char *ins = NULL;
    char one[3] = {s[0], 0, 0};
    if (s[0] == '%' && s[1]) {
      switch (s[1]) {
      case 'h':
        ins = host;
        break;
      case 'p':
        ins = pidbuf;
        break;
      case 'c':
        ins = comm;
        break;
      case '%':
        ins = "%";
        break;
      default:
        one[1] = s[1];
        ins = one;
        break;
      }
      s++;
    } else {
      ins = one;
    }
    size_t l = strlen(ins);
    if (n + l >= outlen) {
      ok = 0;
      l = n < outlen ? outlen - 1 - n : 0;
    }
    memcpy(out + n, ins, l);
    n += l;
    if (!ok) break;
  }
  if (outlen) out[n < outlen ? n : outlen - 1] = '\0';
  return ok ? 0 : -1;
}

/* cJSON_Add* return NULL on allocation failure; one flag collects them all. */
#define ADD(expr)                                                                                  \
  do {                                                                                             \
    if (!(expr)) ok = 0;                                                                           \
  } while (0)

static cJSON *per_coll(const uint64_t *v) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  for (int c = 0; c < NCCL_NUM_FUNCTIONS; c++)
    if (!cJSON_AddNumberToObject(o, nt_coll_name(c), (double)v[c])) {
      cJSON_Delete(o);
      return NULL;
    }
  return o;
}

static char *report_json(const nt_ctx_t *ctx, const char *host) {
  int ok = 1;
  cJSON *root = cJSON_CreateObject();
  if (!root) return NULL;
  char buf[32];
  ADD(cJSON_AddStringToObject(root, "schema", "nettune.plugin-report/1"));
  ADD(cJSON_AddStringToObject(root, "plugin", "nettune"));
  ADD(cJSON_AddNumberToObject(root, "api_version", ctx->api));
  ADD(cJSON_AddStringToObject(root, "host", host));
  ADD(cJSON_AddNumberToObject(root, "pid", (double)getpid()));
  cJSON *comm = cJSON_AddObjectToObject(root, "comm");
  ADD(comm);
  if (comm) {
    if (ctx->has_comm_id) {
      snprintf(buf, sizeof(buf), "%016" PRIx64, ctx->comm_id);
      ADD(cJSON_AddStringToObject(comm, "id", buf));
    } else {
      ADD(cJSON_AddNumberToObject(comm, "seq", (double)ctx->seq));
    }
    ADD(cJSON_AddNumberToObject(comm, "n_ranks", (double)ctx->nranks));
    ADD(cJSON_AddNumberToObject(comm, "n_nodes", (double)ctx->nnodes));
  }
  if (ctx->path) {
    cJSON *f = cJSON_AddObjectToObject(root, "tuning_file");
    ADD(f);
    if (f) {
      ADD(cJSON_AddStringToObject(f, "path", ctx->path));
      ADD(cJSON_AddStringToObject(f, "format", ctx->format == NT_FORMAT_JSON ? "json" : "csv"));
      if (ctx->file_used) {
        snprintf(buf, sizeof(buf), "%016" PRIx64, ctx->hash);
        ADD(cJSON_AddStringToObject(f, "fnv1a64", buf));
        ADD(cJSON_AddNumberToObject(f, "rules_loaded", (double)ctx->rules_loaded));
        ADD(cJSON_AddNumberToObject(f, "rules_kept", ctx->ix.nrules));
      } else {
        ADD(cJSON_AddStringToObject(f, "error", ctx->file_error ? ctx->file_error : "rejected"));
      }
    }
  } else {
    ADD(cJSON_AddNullToObject(root, "tuning_file"));
  }
  static const char *const names[2] = {"calls", "calls_nccl_choice_kept"};
  const uint64_t *vals[2] = {ctx->calls, ctx->kept_nccl};
  for (int k = 0; k < 2; k++) {
    cJSON *o = per_coll(vals[k]);
    if (!o || !cJSON_AddItemToObject(root, names[k], o)) {
      cJSON_Delete(o);
      ok = 0;
    }
  }
  cJSON *rules = cJSON_AddArrayToObject(root, "rules");
  ADD(rules);
  for (uint32_t i = 0; rules && ok && i < ctx->ix.nrules; i++) {
    const nt_krule_t *r = &ctx->ix.rules[i];
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(rules, o)) {
      cJSON_Delete(o);
      ok = 0;
      break;
    }
    ADD(cJSON_AddNumberToObject(o, ctx->format == NT_FORMAT_JSON ? "index" : "line", r->src));
    ADD(cJSON_AddStringToObject(o, "coll", nt_coll_name(r->coll)));
    ADD(cJSON_AddNumberToObject(o, "fired",
                                (double)__atomic_load_n(&ctx->ix.fired[i], __ATOMIC_RELAXED)));
    ADD(cJSON_AddNumberToObject(o, "unavailable",
                                (double)__atomic_load_n(&ctx->ix.unavail[i], __ATOMIC_RELAXED)));
  }
  char *text = ok ? cJSON_Print(root) : NULL;
  cJSON_Delete(root);
  return text;
}

int nt_report_write(const nt_ctx_t *ctx, char *err, size_t errlen) {
  char host[256] = "unknown";
  if (gethostname(host, sizeof(host)) != 0) snprintf(host, sizeof(host), "unknown");
  host[sizeof(host) - 1] = '\0';
  char comm[32];
  if (ctx->has_comm_id)
    snprintf(comm, sizeof(comm), "%016" PRIx64, ctx->comm_id);
  else
    snprintf(comm, sizeof(comm), "%lu", ctx->seq);
  char path[4096], tmp[4200];
  if (nt_report_expand(ctx->report_tmpl, host, (long)getpid(), comm, path, sizeof(path)) != 0) {
    snprintf(err, errlen, "report path from NETTUNE_PLUGIN_REPORT is too long");
    return -1;
  }
  snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%lx", path, (long)getpid(), (unsigned long)(uintptr_t)ctx);
  char *text = report_json(ctx, host);
  if (!text) {
    snprintf(err, errlen, "out of memory building the report");
    return -1;
  }
  char ebuf[128];
  FILE *f = fopen(tmp, "we");
  if (!f) {
    snprintf(err, errlen, "cannot create '%s': %s", tmp, strerror_r(errno, ebuf, sizeof(ebuf)));
    free(text);
    return -1;
  }
  size_t len = strlen(text);
  int bad = fwrite(text, 1, len, f) != len || fputc('\n', f) == EOF;
  bad |= fclose(f) != 0;
  free(text);
  if (bad) {
    snprintf(err, errlen, "cannot write '%s': %s", tmp, strerror_r(errno, ebuf, sizeof(ebuf)));
    remove(tmp);
    return -1;
  }
  if (rename(tmp, path) != 0) {
    snprintf(err, errlen, "cannot rename '%s' to '%s': %s", tmp, path,
             strerror_r(errno, ebuf, sizeof(ebuf)));
    remove(tmp);
    return -1;
  }
  return 0;
}

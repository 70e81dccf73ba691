#!/bin/sh
# The documents' lint (run by `make test-unit`; usable on any checkout: check-docs.sh [ROOT]):
#   1. README.md has at most 250 lines: it is read in two minutes, the reference is in docs/;
#   2. every file or folder a document names exists: in README.md and every Markdown file of the
#      tree, each link target (relative to the document) and each repository path in the text
#      (relative to the root, e.g. `lib/verdict.c`, docs/verdicts.md), and each link's #anchor
#      names a heading of its target (GitHub's anchors); docs/architecture.md names every
#      top-level folder and every test folder, so the layout it describes is the tree's;
#   3. no comment or document cites an issue number ("issue 9 item 4", "tester defect 3"):
#      the tracker is not part of the repository, so a comment says the reason instead.
# One line per problem, "file:line: what", and exit 1 when there is one.
set -u
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
exec python3 - "$root" <<'EOF'
import os, re, subprocess, sys

root = sys.argv[1]
README_MAX = 250
problems = []

def tracked(*patterns):
    try:
        out = subprocess.run(['git', '-C', root, 'ls-files', '-z', '--', *patterns], check=True,
                             capture_output=True).stdout.decode()
        return sorted(p for p in out.split('\0') if p and os.path.isfile(os.path.join(root, p)))
    except (OSError, subprocess.CalledProcessError):   # not a git checkout: every file
        import fnmatch
        found = []
        for d, dirs, files in os.walk(root):
            dirs[:] = [x for x in dirs if x not in ('.git', 'build', 'build-san')]
            for f in files:
                rel = os.path.relpath(os.path.join(d, f), root)
                if any(fnmatch.fnmatch(rel if '/' in p else os.path.basename(rel), p)
                       for p in patterns):
                    found.append(rel)
        return sorted(found)

# 1. README length
with open(os.path.join(root, 'README.md'), encoding='utf-8') as f:
    n = sum(1 for _ in f)
if n > README_MAX:
    problems.append(f'README.md:{n}: {n} lines, at most {README_MAX}: move reference material '
                    f'into the docs/ page of its command')

# 2. citations
def slug(heading):
    """GitHub's anchor of a heading: lowercase, punctuation but '-' and '_' dropped, spaces '-'."""
    h = re.sub(r'`|\*\*|\[|\]\([^)]*\)', '', heading.strip().lower())
    h = re.sub(r'[^\w\- ]', '', h)
    return h.replace(' ', '-')

anchors_cache = {}
def anchors(path):
    if path not in anchors_cache:
        seen, out, fence = {}, set(), False
        with open(path, encoding='utf-8', errors='replace') as f:
            for line in f:
                if line.startswith('```'):
                    fence = not fence
                m = None if fence else re.match(r'#{1,6}\s+(.*?)\s*#*\s*$', line)
                if m:
                    s = slug(m.group(1))
                    k = seen.get(s, 0)
                    seen[s] = k + 1
                    out.add(s if k == 0 else f'{s}-{k}')
        anchors_cache[path] = out
    return anchors_cache[path]

TOPS = sorted({p.split('/', 1)[0] for p in tracked('*') if '/' in p} | {'build'})
TOPS = [t for t in TOPS if t not in ('build',)]
# A repository path in the text: a top-level folder of the tree, then a path. Placeholders
# (<name>, *, %, {a,b}, $VAR) mean a family of files, not one, and are not checked.
PATH = re.compile(r'(?<![\w./-])((?:' + '|'.join(map(re.escape, TOPS)) +
                  r')/[A-Za-z0-9_./+-]*)')
LINK = re.compile(r'\]\(([^)\s]+)(?:\s+"[^"]*")?\)')
PLACEHOLDER = re.compile(r'[<>*%{}$]')

def exists(rel):
    return os.path.exists(os.path.join(root, rel))

docs = tracked('*.md')
for doc in docs:
    ddir = os.path.dirname(doc)
    with open(os.path.join(root, doc), encoding='utf-8', errors='replace') as f:
        lines = f.read().split('\n')
    for i, line in enumerate(lines, 1):
        for m in LINK.finditer(line):
            target = m.group(1)
            if re.match(r'[a-z]+:', target):          # http:, https:, mailto:
                continue
            path, _, frag = target.partition('#')
            full = os.path.normpath(os.path.join(ddir, path)) if path else doc
            if path and not exists(full):
                problems.append(f'{doc}:{i}: link to {target}: {full} does not exist')
                continue
            if frag and full.endswith('.md') and frag not in anchors(os.path.join(root, full)):
                problems.append(f'{doc}:{i}: link to {target}: {full} has no heading #{frag}')
        text = LINK.sub('', line)
        for m in PATH.finditer(text):
            p = m.group(1).rstrip('.,:;')
            tail = text[m.end():m.end() + 1]
            if PLACEHOLDER.search(p) or tail in '<*%{$' and tail:
                continue
            if p.startswith('build/') or '/build/' in p or not p or p.endswith('/.'):
                continue                                # build outputs
            if re.search(r'\.(so(\.[0-9]+)*|a|o)$', p):
                continue                                # libraries built or installed
            if re.search(r"(\b[\w.-]+/[\w.-]+ |\w's `?)$", text[:m.start()]):
                continue                                # another project's path: "NCCL's ...",
                                                        # "open-mpi/hwloc tests/..."

            if not exists(p):
                problems.append(f'{doc}:{i}: names {p}, which does not exist')

# 2b. docs/architecture.md describes the whole tree: every top-level folder and every test
# folder is named there (a folder added without a line in the layout is found here).
arch = os.path.join(root, 'docs/architecture.md')
if os.path.exists(arch):
    text = open(arch, encoding='utf-8').read()
    files = tracked('*')
    folders = {p.split('/', 1)[0] for p in files if '/' in p}
    folders |= {'/'.join(p.split('/')[:2]) for p in files if p.startswith('tests/') and p.count('/') >= 2}
    for d in sorted(folders):
        if not re.search(r'(?<![\w./-])' + re.escape(d) + r'(/|`|\b)', text):
            problems.append(f'docs/architecture.md: does not name {d}/, a folder of the tree')

# 3. issue numbers in comments and documents
CITE = re.compile(r'\b(issues? [0-9]+|tester defect|defect [0-9]+|items? [0-9]+)', re.I)
for path in tracked('*.c', '*.h', '*.cu', '*.S', '*.def', '*.mk', '*.sh', '*.py', '*.md', 'Makefile',
                    '*.supp', '.ci/*', 'reports/schema/*.json', 'contrib/*'):
    if path == 'tests/lint/check-docs.sh':
        continue
    with open(os.path.join(root, path), encoding='utf-8', errors='replace') as f:
        for i, line in enumerate(f, 1):
            m = CITE.search(line)
            if m:
                problems.append(f'{path}:{i}: cites "{m.group(1)}": say the reason instead')

for p in problems:
    print(p)
if problems:
    print(f'check-docs: {len(problems)} problems', file=sys.stderr)
sys.exit(1 if problems else 0)
EOF

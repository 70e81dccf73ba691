#!/usr/bin/env python3
"""The naming rule for static functions (docs/architecture.md, "Names"), checked on a checkout.

Outside tests/ and plugins/, every function is named nt_<object>_<verb>, static ones too: a
static function's name starts with "nt_". The NCCL tuner plugin (plugins/) looks like NCCL's own
example, whose file-local functions carry no prefix: there a static function's name does not
start with "nt_" (nt_ marks the functions its files share). Test folders (tests/, the plugin's
tests/) are free: cmocka's cases are test_<case>. A static inline function of a header is shared
by every file that includes it, so it is named as a shared function is: nt_ everywhere.

Usage: static-names.py [--max N] [ROOT]   (default ROOT: the checkout this script is in)
Prints one line per violation, "path:line: name: why", and exits 1 when there is one (with
--max N: only when more than N functions break it: the count the tree had when the rule was
written, a ratchet until the one renaming of the whole tree brings it to 0); with
--list, prints "path<TAB>name<TAB>rule" for every static function checked (the rename tool's
input) and exits 0.
"""
import os
import re
import subprocess
import sys

# A static function's definition or declaration, as clang-format writes them (.clang-format):
# "static", qualifiers and the return type on one line, then the name and "(" with no space.
# A function pointer variable, "static int (*fp)(...)", has "(" before its name: not matched.
DEF = re.compile(r'^static\b[^=;(]*?[\s*]([A-Za-z_]\w*)\(')


def rule_of(path):
    """The rule for a source file: 'prefix' (must start with nt_), 'plain' (must not), None."""
    parts = path.split('/')
    if 'tests' in parts[:-1]:
        return None
    if path.endswith('.h'):
        return 'prefix'         # a static inline of a header is shared by its includers
    if parts[0] == 'plugins':
        return 'plain'
    return 'prefix'


def sources(root):
    out = subprocess.run(['git', '-C', root, 'ls-files', '-z', '--', '*.c', '*.h', '*.cu'],
                         check=True, capture_output=True).stdout.decode()
    return sorted(p for p in out.split('\0') if p and os.path.isfile(os.path.join(root, p)))


def statics(root, path):
    """(line, name) of every static function defined or declared at file scope in path."""
    found = []
    with open(os.path.join(root, path), encoding='utf-8', errors='replace') as f:
        lines = f.readlines()
    for n, line in enumerate(lines, 1):
        m = DEF.match(line)
        if not m:
            continue
        if m.group(1) == '__attribute__':
            # "static int __attribute__((format(printf, 3, 4)))" with the name on the next line
            nxt = re.match(r'([A-Za-z_]\w*)\(', lines[n] if n < len(lines) else '')
            if nxt:
                found.append((n + 1, nxt.group(1)))
            continue
        found.append((n, m.group(1)))
    return found


def main(argv):
    listing = '--list' in argv
    args = [a for a in argv if a != '--list']
    limit = 0
    if args[:1] == ['--max']:
        if len(args) < 2 or not args[1].isdigit():
            print('usage: static-names.py [--max N] [--list] [ROOT]', file=sys.stderr)
            return 2
        limit = int(args[1])
        args = args[2:]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
    bad = set()
    lines = []
    for path in sources(root):
        rule = rule_of(path)
        if rule is None:
            continue
        for n, name in statics(root, path):
            prefixed = name.startswith('nt_')
            if listing:
                if (path, name) not in bad:
                    bad.add((path, name))
                    print(f'{path}\t{name}\t{rule}')
                continue
            if rule == 'prefix' and not prefixed:
                why = 'a static function outside plugins/ and tests/ is named nt_<object>_<verb>'
            elif rule == 'plain' and prefixed:
                why = ("a static function of the plugin carries no nt_ prefix, as in NCCL's "
                       "example (nt_ marks what its files share)")
            else:
                continue
            if (path, name) not in bad:
                lines.append(f'{path}:{n}: {name}: {why}')
            bad.add((path, name))
    if listing:
        return 0
    if lines and (len(bad) > limit or not limit):
        print('\n'.join(lines))
    if len(bad) > limit:
        print(f'static-names: {len(bad)} static functions break the naming rule '
              f'(docs/architecture.md, "Names"), {limit} allowed', file=sys.stderr)
        return 1
    if bad:
        print(f'static-names: {len(bad)} static functions still to rename (at most {limit}; '
              f'static-names.py without --max lists them)')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))

"""What a command line of cutuned or cutune may say, read from the binaries' own --help (CLI11's
format): the option names, which of them take a value, and the subcommands. Shared by
docker_test.py and kubernetes_test.py, so a manifest or the Dockerfile can only use what the
binaries accept."""
import re
import subprocess


class Help:
    """One `PROGRAM [SUBCOMMAND...] --help` page."""

    def __init__(self, text):
        self.text = text
        self.options = {}  # name -> takes a value
        self.subcommands = set()
        self.positionals = "\nPositionals:\n" in text
        section = None
        for line in text.splitlines():
            if re.match(r"^[A-Z][A-Za-z ]*:$", line):
                section = line[:-1]
                continue
            # Option lines start with exactly two spaces and a dash; descriptions wrapped onto
            # their own lines are indented much further.
            m = re.match(r"^  (-\S+)(?:\s+(\S+))?", line)
            if m:
                takes_value = bool(m.group(2) and re.match(r"^[A-Z]{3,}", m.group(2)))
                for name in m.group(1).split(","):
                    name = re.sub(r"\{[^}]*\}", "", name)
                    if name.startswith("-"):
                        self.options[name] = takes_value
                continue
            m = re.match(r"^  ([a-z][\w-]*)\s", line)
            if m and section == "Subcommands":
                self.subcommands.add(m.group(1))


def help_page(program, path=()):
    out = subprocess.run([program, *path, "--help"], capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        raise RuntimeError(f"{program} {' '.join(path)} --help exited {out.returncode}: {out.stderr}")
    return Help(out.stdout)


class CommandLine:
    """A command line checked against the program's help pages: `problems` lists every word the
    program would not accept as an option or subcommand; `values` maps each option given to its
    value(s) (None for a flag); `path` is the subcommand chain (`table export`). An option the
    help does not list is a problem; its value is guessed (the next word unless it is an option)
    and kept in `guessed`, so that checks of what the value says can still run."""

    def __init__(self, program, argv):
        self.path = []
        self.values = {}
        self.guessed = {}
        self.positionals = []
        self.problems = []
        page = help_page(program)
        i = 0
        while i < len(argv):
            word = argv[i]
            if word.startswith("-"):
                name, eq, inline = word.partition("=")
                if name not in page.options:
                    where = " ".join([program.rsplit("/", 1)[-1], *self.path])
                    self.problems.append(f"`{where} --help` has no {name}")
                    if eq:
                        value = inline
                    elif i + 1 < len(argv) and not argv[i + 1].startswith("-"):
                        value = argv[i + 1]
                        i += 1
                    else:
                        value = None
                    self.guessed.setdefault(name, []).append(value)
                    i += 1
                    continue
                if page.options[name] and not eq:
                    value = argv[i + 1] if i + 1 < len(argv) else None
                    i += 1
                else:
                    value = inline if eq else None
                self.values.setdefault(name, []).append(value)
            elif not self.positionals and word in page.subcommands:
                self.path.append(word)
                page = help_page(program, self.path)
            elif page.subcommands and not page.positionals:
                where = " ".join([program.rsplit("/", 1)[-1], *self.path])
                self.problems.append(f"`{where} --help` has no subcommand {word}")
                self.positionals.append(word)
            else:
                self.positionals.append(word)
            i += 1

    def value(self, name):
        """The last value given for `name` (also an option the help does not list), or None."""
        values = self.values.get(name) or self.guessed.get(name)
        return values[-1] if values else None

    def given(self, name):
        return name in self.values or name in self.guessed

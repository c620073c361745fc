"""docs/configuration.md and docs/party.example.toml, rendered from the option table, and the
check that the table's defaults are what load_config gives.

    python -m pprl.party.config_reference markdown > docs/configuration.md
    python -m pprl.party.config_reference example > docs/party.example.toml

(`make docs` runs both; tests/test_options.py fails when either file is stale.)
"""

from __future__ import annotations

import json
import sys
import tempfile
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from pprl.party.config import PartyConfig, load_config
from pprl.party.options import OPTIONS, TABLES, Option
from pprl.protocol.data.kinds import DEFAULT_DATE_FORMAT, DEFAULT_KIND
from pprl.protocol.encodings.registry import DEFAULT_ENCODING, ENCODINGS
from pprl.protocol.sealed.session import thresholds

WIDTH = 100


def toml_value(value: Any) -> str:
    """A value as TOML writes it (inline tables for dictionaries)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str | Path):
        return json.dumps(str(value))
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML form for {value!r}")


def skeleton() -> dict[str, Any]:
    """The example's own settings: every required key and every key each party sets."""
    data: dict[str, Any] = {}
    for option in OPTIONS:
        if (option.required or option.yours) and option.table != "peers":
            _set(data, option, option.example)
    return data


def _set(data: dict[str, Any], option: Option, value: Any) -> None:
    if not option.table:
        data[option.key] = value
    elif option.table == "peers":
        data["peers"][0][option.key] = value
    else:
        data.setdefault(option.table, {})[option.key] = value


def toml_text(data: dict[str, Any]) -> str:
    """A configuration as a file: the top-level keys, then a table each."""
    lines = [f"{k} = {toml_value(v)}" for k, v in data.items() if not isinstance(v, dict | list)]
    for name, value in data.items():
        if isinstance(value, dict):
            lines += [f"[{name}]"] + [f"{k} = {toml_value(v)}" for k, v in value.items()]
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            for entry in value:
                lines += [f"[[{name}]]"] + [f"{k} = {toml_value(v)}" for k, v in entry.items()]
    return "\n".join(lines) + "\n"


def load_text(directory: Path, text: str, name: str = "party.toml") -> PartyConfig:
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return load_config(path)


# Where a key's value is in a loaded PartyConfig, for the keys not found under their own name
# in the table's part of it (config.method, config.privacy, config.tls, config.peers[0], or
# config itself).
_READERS: dict[str, Callable[[PartyConfig], Any]] = {
    "records.path": lambda c: c.records_path,
    "records.kinds": lambda c: {a.name: a.kind for a in c.schema if a.kind != DEFAULT_KIND},
    "records.date_formats": lambda c: {
        a.name: a.date_format for a in c.schema if a.date_format != DEFAULT_DATE_FORMAT
    },
    "records.scales": lambda c: {a.name: a.scale for a in c.schema if a.scale is not None},
    "reference.path": lambda c: c.reference_path,
    "reference.mapping": lambda c: [list(entry) for entry in c.mapping],
    "method.sealed_keys": lambda c: c.method.sealed_keys.split(","),
    "method.sealed_thresholds": lambda c: list(thresholds(c.method.sealed_thresholds)),
    "method.noise_sigma": lambda c: "auto" if c.auto_noise else c.method.noise_sigma,
    "method.attack_success": lambda c: c.attack_success,
    "peer.timeout_seconds": lambda c: c.peers[0].timeout,
    "peers.timeout_seconds": lambda c: c.peers[0].timeout,
    "coordinator.identity": lambda c: c.coordinator_identity,
    "wire_log.path": lambda c: c.wire_log,
    "development.seed": lambda c: c.development_seed,
}


def loaded_value(config: PartyConfig, option: Option) -> Any:
    """The option's value in a loaded configuration, in the form a file writes it."""
    reader = _READERS.get(option.dotted)
    if reader is not None:
        value = reader(config)
    else:
        parts = {"method": config.method, "privacy": config.privacy, "tls": config.tls}
        if option.table in ("peer", "peers"):
            parts[option.table] = config.peers[0]
        value = getattr(parts.get(option.table, config), option.key)
    if isinstance(value, Path):
        return str(value)
    return list(value) if isinstance(value, tuple) else value


def same_config(a: PartyConfig, b: PartyConfig) -> bool:
    """Whether two loaded files configure the same party, their paths and one record of how
    a value was given aside: whether the register error model was chosen by default (which
    naming it changes)."""

    def plain(config: PartyConfig) -> PartyConfig:
        return replace(config, source="", registers_by_default=False)

    return plain(a) == plain(b)


def context(option: Option) -> dict[str, Any]:
    """The example's settings without the option's key, with an encoding the option applies
    to (and the key file a keyed one needs) and, for a [[peers]] key, its peer as a [[peers]]
    table."""
    data = skeleton()
    (data.get(option.table, {}) if option.table else data).pop(option.key, None)
    if option.encodings and DEFAULT_ENCODING not in option.encodings:
        encoding = option.encodings[0]
        data["method"] = {"encoding": encoding}
        if ENCODINGS[encoding].keyed:
            data["privacy"] = {"bloom_key": "bloom.key"}
    if option.table == "peers":
        data["peers"] = [data.pop("peer")]
    return data


def default_problems(options: Iterable[Option], directory: Path) -> list[str]:
    """Each literal default that is not what load_config gives without the key, or that
    configures the party otherwise when written out."""
    problems = []
    for option in options:
        if option.default is None:
            continue
        data = context(option)
        absent = load_text(directory, toml_text(data))
        got = loaded_value(absent, option)
        if got != option.default:
            problems.append(
                f"{option.dotted}: the table's default is {option.default!r}, "
                f"load_config gives {got!r} without the key"
            )
            continue
        _set(data, option, option.default)
        if not same_config(load_text(directory, toml_text(data)), absent):
            problems.append(
                f"{option.dotted} = {toml_value(option.default)} configures the party "
                "otherwise than leaving it out"
            )
    return problems


def _example_values() -> dict[str, Any]:
    """What the example file gets for each key it leaves out (dependent defaults included)."""
    with tempfile.TemporaryDirectory() as directory:
        config = load_text(Path(directory), toml_text(skeleton()))
    return {option.dotted: loaded_value(config, option) for option in OPTIONS}


def _comment(text: str) -> list[str]:
    """Text as comment lines, never broken inside a hyphenated name."""
    return textwrap.wrap(
        text, WIDTH, initial_indent="# ", subsequent_indent="# ", break_on_hyphens=False
    )


def _applies(option: Option) -> str:
    if not option.encodings:
        return ""
    names = [f'"{name}"' for name in option.encodings]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
    return f"Applies to encoding {listed}."


def example() -> str:
    """docs/party.example.toml: the required keys set, every other key commented out at the
    value this file gets without it."""
    values = _example_values()
    lines = [
        "# An annotated party configuration, generated from pprl/party/options.py (make docs);",
        "# docs/configuration.md explains every key, and tests/test_options.py checks this file.",
        "#",
        '# Keys marked "required" must be set and those marked "yours" every party sets: the',
        "# values shown are examples. Every other key is commented out at the value this file",
        "# gets without it, so uncommenting one changes nothing until you change its value; a",
        '# key marked "example" is unset by default and shows a value it might take. Relative',
        "# paths are read beside this file.",
    ]
    for table, about in TABLES.items():
        if table == "peers":
            several = "To link with several peers, give a [[peers]] table per peer, each with "
            lines += ["", *_comment(several + "[peer]'s keys, in place of [peer].")]
            continue
        lines += ["", "", f"[{table}]", *_comment(about)] if table else []
        for option in (o for o in OPTIONS if o.table == table):
            lines += _example_lines(option, values[option.dotted])
    return "\n".join(lines) + "\n"


def _example_lines(option: Option, value: Any) -> list[str]:
    """A blank line, the key's description (and its default when that is not the value
    shown), and the key."""
    said = " ".join(filter(None, (option.description, _applies(option))))
    if option.required or option.yours:
        mark = "required" if option.required else "yours"
        return ["", *_comment(said), f"{option.key} = {toml_value(option.example)}  # {mark}"]
    if option.example is not None:
        said += f" Default: {option.default_text}."
        return ["", *_comment(said), *_commented(option.key, option.example, "  # example")]
    if option.default is None:
        said += f" Default: {option.default_text}; in this file:"
    return ["", *_comment(said), *_commented(option.key, value)]


def _commented(key: str, value: Any, mark: str = "") -> list[str]:
    """A key commented out, a long list one item a line."""
    line = f"# {key} = {toml_value(value)}{mark}"
    if len(line) <= WIDTH or not isinstance(value, list):
        return [line]
    return [f"# {key} = [", *(f"#     {toml_value(v)}," for v in value), f"# ]{mark}"]


def markdown() -> str:
    """docs/configuration.md: a section per table, a row per key."""
    lines = [
        "# Configuration reference",
        "",
        "Every key of a party daemon's TOML file (`pprl party serve --config FILE`), generated "
        "from the option table in `pprl/party/options.py`, the same table the loader takes its "
        "keys from: regenerate with `make docs`, and `tests/test_options.py` fails when this "
        "file and the code disagree. An annotated file to start from: "
        "[party.example.toml](party.example.toml).",
        "",
        "A default in `code` is what a file gets without the key, and writing it changes "
        "nothing (the tests load both); other defaults depend on other settings or are unset. "
        "Relative paths are read beside the configuration file. Any key not listed here is "
        "refused, so a typo fails at start-up rather than leaving a default in place.",
    ]
    for table, about in TABLES.items():
        title = "Top level" if not table else f"[[{table}]]" if table == "peers" else f"[{table}]"
        lines += ["", f"## {title}", "", about, "", "| Key | Type | Default | Description |"]
        lines += ["| --- | --- | --- | --- |"]
        lines += [_row(option) for option in OPTIONS if option.table == table]
    return "\n".join(lines) + "\n"


def _row(option: Option) -> str:
    if option.required:
        default = "required"
    elif option.default is not None:
        default = f"`{toml_value(option.default)}`"
    else:
        default = option.default_text
    description = option.description
    if option.choices:
        description += " Choices: " + ", ".join(f"`{c}`" for c in option.choices) + "."
    description = " ".join(filter(None, (description, _applies(option))))
    cells = (f"`{option.key}`", option.type, default, description)
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


# Each generated file of docs/ and what renders it.
RENDERED: dict[str, Callable[[], str]] = {
    "configuration.md": markdown,
    "party.example.toml": example,
}


def stale_docs(docs: Path) -> list[str]:
    """The generated files of `docs` that differ from what the table renders now."""
    return [
        name
        for name, render in RENDERED.items()
        if not (docs / name).exists() or (docs / name).read_text(encoding="utf-8") != render()
    ]


def main(argv: list[str]) -> int:
    renderers = {"markdown": markdown, "example": example}
    if len(argv) != 1 or argv[0] not in renderers:
        print(f"usage: python -m pprl.party.config_reference {{{'|'.join(renderers)}}}")
        return 2
    sys.stdout.write(renderers[argv[0]]())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

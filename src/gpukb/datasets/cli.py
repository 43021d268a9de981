"""``gpukb datasets``: list, filter and show catalog entries, and count what an annotation or EDF file holds."""

from __future__ import annotations

import argparse
from pathlib import Path

from gpukb import arguments
from gpukb.datasets import coco, eeg_files, odgt, tables
from gpukb.datasets.catalog import DOMAINS, STATUSES, Dataset, load, load_all
from gpukb.tables import text_table

EPILOG = """examples:
  gpukb datasets list --domain eeg --status verified
  gpukb datasets list --domain eeg --search "motor imagery" --min-subjects 50
  gpukb datasets show bci-iv-2a
  gpukb datasets papers
  gpukb datasets stats annotations.json        COCO-style JSON: images, persons, crowd regions
  gpukb datasets stats annotation_train.odgt   CrowdHuman .odgt: images, persons, ignore regions
  gpukb datasets stats rec1.edf rec2.edf       EDF headers: subjects, EEG channels, sampling rates"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``datasets`` subcommand."""
    parser = sub.add_parser(
        "datasets",
        help="the EEG and person-detection dataset catalogs, checked against their sources",
        description="List, filter and show catalog entries with their verification; count what a file holds.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="a table of entries, filtered")
    listing.add_argument("--domain", choices=DOMAINS, default="eeg", help="which catalog (default: eeg)")
    listing.add_argument("--status", choices=STATUSES, help="keep one verification status")
    listing.add_argument("--search", metavar="TEXT", help="keep entries whose name, aliases, task or paradigm has TEXT")
    listing.add_argument(
        "--min-subjects", type=_count, metavar="N", help="EEG: keep entries with at least N subjects (N ≥ 0)"
    )
    show = actions.add_parser("show", help="one entry with its figures and sources")
    show.add_argument("id", help="the entry's id or one of its names or aliases")
    papers = actions.add_parser("papers", help="papers a summary cited, with the claimed result and the verdict")
    papers.add_argument("--domain", choices=DOMAINS, default="eeg")
    stats = actions.add_parser("stats", help="count what annotation (.json, .odgt) or EDF files hold")
    stats.add_argument("files", nargs="+", type=Path, help="one COCO .json, one .odgt, or any number of .edf files")
    stats.add_argument("--category", help="COCO category name (default: person); only for a COCO .json file")
    parser.set_defaults(handler=run, parser=parser)


def _count(text: str) -> int:
    """An argparse type: a whole number ≥ 0 (argparse turns the ValueError into a usage error naming the option)."""
    try:
        return arguments.non_negative_int("N", int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"N is a whole number ≥ 0; got {text!r}") from None


def _find(key: str) -> Dataset:
    wanted = key.casefold()
    for cat in load_all().values():
        for d in cat.datasets:
            if wanted == d.id or wanted in (n.casefold() for n in (d.name, *d.aliases)):
                return d
    raise ValueError(f"no dataset with id, name or alias {key!r}; try: gpukb datasets list --search {key!r}")


def _show(d: Dataset) -> None:
    print(f"{d.name}  [{d.id}]  {d.status}, checked {d.verification.checked.isoformat()}")
    if d.aliases:
        print(f"  also known as: {', '.join(d.aliases)}")
    rows = [[k, getattr(d, k)] for k in ("task", "modality")]
    facts = d.facts
    if facts is not None:
        rows += [[k.replace("_", " "), tables.value(d, f"{d.domain}.{k}")] for k in type(facts).model_fields]
    rows += [[k, getattr(d, k)] for k in ("year", "license", "access", "homepage", "doi", "arxiv", "paper")]
    print(text_table(["field", "value"], [[k, "—" if v is None else v] for k, v in rows if v is not None]))
    if d.note:
        print(f"\nnote: {' '.join(d.note.split())}")
    if d.verification.notes_said:
        print(f"\na widely shared summary said: {d.verification.notes_said}")
    print("\nsources read:")
    for kind, title, url in tables.sources_of(d):
        print(f"  [{kind}] {title}\n          {url}")


def _stats(files: list[Path], category: str | None) -> None:
    suffixes = {f.suffix.lower() for f in files}
    if category is not None and suffixes != {".json"}:
        raise ValueError(f"--category {category!r} picks a COCO category; it applies to one .json file only")
    category = "person" if category is None else category
    if suffixes == {".edf"}:
        s = eeg_files.summarize(files)
        print(
            text_table(
                ["files", "subjects", "EEG channels", "sampling rates (Hz)", "hours"],
                [
                    [
                        s.files,
                        len(s.subjects),
                        ", ".join(map(str, s.eeg_channels)),
                        ", ".join(f"{r:g}" for r in s.sampling_rates_hz),
                        f"{s.hours:.2f}",
                    ]
                ],
            )
        )
        return
    if len(files) != 1 or suffixes - {".json", ".odgt"}:
        raise ValueError("give one .json (COCO) or .odgt (CrowdHuman) file, or any number of .edf files")
    path = files[0]
    result = odgt.stats(odgt.read(path)) if path.suffix.lower() == ".odgt" else coco.stats(coco.load(path), category)
    print(
        text_table(
            ["images", "persons", "persons / image", "ignore regions", "ignored persons", "max in one image"],
            [
                [
                    result.images,
                    result.instances,
                    f"{result.persons_per_image:.2f}",
                    result.ignore_regions,
                    result.ignored_instances,
                    result.max_per_image,
                ]
            ],
        )
    )


def run(args: argparse.Namespace) -> int:
    """Run the action; bad input exits with status 2 and a message naming what was wrong."""
    parser: argparse.ArgumentParser = args.parser
    try:
        if args.action == "list":
            cat = load(args.domain)
            chosen = tables.select(cat, status=args.status, text=args.search, min_subjects=args.min_subjects)
            headers, rows = tables.dataset_table(args.domain, chosen)
            keep = [i for i, h in enumerate(headers) if h not in ("task", "access")]
            print(
                text_table(
                    ["id", *(headers[i] for i in keep)],
                    [[e.id, *("—" if r[i] is None else r[i] for i in keep)] for e, r in zip(chosen, rows, strict=True)],
                )
            )
            print(f"\n{len(chosen)} of {len(cat.datasets)} entries in {cat.file}")
        elif args.action == "show":
            _show(_find(args.id))
        elif args.action == "papers":
            headers, rows = tables.paper_table(args.domain)
            print(text_table(headers[:5], [["—" if c is None else c for c in r[:5]] for r in rows]))
        else:
            try:
                _stats(args.files, args.category)
            except UnicodeDecodeError:
                files = ", ".join(map(str, args.files))
                raise ValueError(
                    f"{files}: not UTF-8 text (COCO .json and CrowdHuman .odgt files are JSON text)"
                ) from None
    except (ValueError, OSError) as err:
        parser.error(str(err))
    return 0

"""`arena run | ratings | report`: a thin click layer over the arena library.

Bad input (malformed TOML, a missing engine command, an unknown player or option, an
illegal opening, a board size out of range) stops with one `Error: ...` line before
any game starts.
"""
from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import click

from arena.config import ConfigError, TournamentConfig, build_config, load_toml
from arena.openings import OpeningError
from arena.store import Store, StoreError
from engine.games.gomoku import RULES as GOMOKU_RULES

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """PlyZero arena: tournaments between engine processes, Elo tables, reports."""
    # python-chess logs engine misbehaviour (garbage lines, crashes) as warnings; the arena
    # records those as game results instead, so keep them off the console.
    logging.getLogger("chess.engine").setLevel(logging.CRITICAL)


def _check_engines(config: TournamentConfig) -> None:
    """Start every engine once (in parallel): a missing command, a rejected option or board
    size is an error before any game starts."""
    from arena.engines import probe_engine

    with ThreadPoolExecutor(max_workers=len(config.engines)) as pool:
        problems = list(pool.map(lambda e: probe_engine(e, config.game, config.boards, config.rule),
                                 config.engines))
    for problem in problems:
        if problem:
            raise click.ClickException(problem.splitlines()[0])


def _print_tables(store: Store, anchor: str | None, fmt: str = "text", *, echo: Any = click.echo) -> None:
    from arena.report import default_anchor, format_ratings, rating_sections

    players = store.players()
    anchor = anchor or default_anchor(players, store.player_specs())
    if anchor is not None and players and anchor not in players:
        raise click.ClickException(f"anchor {anchor!r} is not a player (players: {', '.join(players)})")
    sections = rating_sections(store.results(), players, anchor)
    echo(format_ratings(sections, fmt).rstrip("\n"))


@main.command()
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="TOML file; flags override it.")
@click.option("--game", default=None, help="chess, gomoku or any registered game [chess].")
@click.option("--board", "boards", default=None, help="Gomoku board sizes, e.g. 9,15,20.")
@click.option("--rule", type=click.Choice(list(GOMOKU_RULES)), default=None)
@click.option("--engine", "engines", multiple=True,
              help="auto (the shipped default) | random | alphabeta:depth=3 | "
                   "'name=sf,cmd=stockfish,proto=uci,option.Hash=16' (repeat).")
@click.option("--games", type=click.IntRange(min=1), default=None, help="Games per pairing (per board size).")
@click.option("--format", "fmt", type=click.Choice(["roundrobin", "gauntlet"]), default=None)
@click.option("--openings", type=click.Path(dir_okay=False), default=None,
              help="Chess EPD/PGN (Chess960 positions play as Chess960), or chess 'chess960': the 960 "
                   "Chess960 start positions, or gomoku 'dx,dy ...' lines, or gomoku 'even': the swap2 "
                   "book's openings judged even for the rule and board (default: built-in / generated).")
@click.option("--opening-plies", type=click.IntRange(min=0), default=None, help="Stones in generated gomoku openings.")
@click.option("--swap2", is_flag=True, default=None,
              help="Gomoku: the engines place the opening by swap2 (SWAP2BOARD), each proposing once a pair.")
@click.option("--movetime", type=click.FloatRange(min=0.001), default=None, help="Seconds per move.")
@click.option("--tc", default=None, help="Chess clock moves/base+inc (40/60+0.6, 10+0.1); gomoku: match seconds.")
@click.option("--nodes", type=click.IntRange(min=1), default=None)
@click.option("--depth", type=click.IntRange(min=1), default=None)
@click.option("--margin", type=click.FloatRange(min=0.0), default=None, help="Time tolerance, seconds [1.0].")
@click.option("--timeout", type=click.FloatRange(min=0.001), default=None,
              help="Longest move when no time limit applies (hang detection), seconds [60].")
@click.option("--max-memory", "max_memory", type=click.IntRange(min=1), default=None,
              help="Gomoku: the judge's memory limit in MB (INFO max_memory; a brain whose processes' "
                   "virtual size exceeds it after a move loses).")
@click.option("--suspend", is_flag=True, default=None,
              help="Gomoku: freeze each brain (SIGSTOP) while its opponent thinks, as the Gomocup judge does.")
@click.option("--maxmoves", type=click.IntRange(min=0), default=None, help="Chess: draw after N moves (0: off) [200].")
@click.option("--draw", default=None, help="Chess draw adjudication: 'movenumber=40 movecount=8 score=10'.")
@click.option("--resign", default=None, help="Chess resign adjudication: 'movecount=3 score=1000'.")
@click.option("--sprt", default=None, help="'elo0=0 elo1=5 alpha=0.05 beta=0.05' (two engines).")
@click.option("--concurrency", type=click.IntRange(min=1), default=None, help="Games at once [cores].")
@click.option("--seed", type=int, default=None)
@click.option("--db", default=None, help="SQLite results file [arena.sqlite].")
@click.option("--pgn-out", default=None, help="Write the games in their record format: PGN (chess), .psq (gomoku).")
@click.option("--anchor", default=None, help="Player at Elo 0 in the final table.")
@click.option("--no-check", is_flag=True, help="Skip starting each engine once before the tournament.")
def run(config_path: str | None, anchor: str | None, no_check: bool, **flags: Any) -> None:
    """Play a tournament (resumes when rerun with the same settings and --db)."""
    from arena.export import games_text
    from arena.scheduler import load_openings, run_tournament

    flags["engine"] = flags.pop("engines")
    flags["format"] = flags.pop("fmt")
    try:
        settings = load_toml(config_path) if config_path else {}
        config = build_config(settings, flags)
        load_openings(config)
    except (ConfigError, OpeningError) as exc:
        raise click.ClickException(str(exc)) from None
    if not no_check:
        _check_engines(config)
    try:
        store = Store(config.db)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    with store:
        summary = run_tournament(config, store, echo=click.echo)
        click.echo(f"Games: {summary.already + summary.played}/{summary.planned} "
                   f"({summary.played} played now, {summary.already} resumed)"
                   + (f", {summary.errors} errors" if summary.errors else ""))
        if summary.sprt is not None and config.sprt is not None:
            click.echo(summary.sprt.line(config.sprt.elo0, config.sprt.elo1))
        _print_tables(store, anchor)
        if config.pgn_out:
            Path(config.pgn_out).write_text(games_text(store.records(game=config.game)), encoding="utf-8")
            click.echo(f"Games written to {config.pgn_out}")


def _open(db: str) -> Store:
    try:
        return Store(db, create=False)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None


@main.command()
@click.argument("db", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True)
@click.option("--anchor", default=None, help="Player at Elo 0 (default: first alphabeta, else first player).")
def ratings(db: str, fmt: str, anchor: str | None) -> None:
    """Elo tables (overall and per board size) of the games in DB."""
    with _open(db) as store:
        _print_tables(store, anchor, fmt)


@main.command()
@click.argument("db", type=click.Path(dir_okay=False))
@click.option("--html", "html_out", default=None, help="HTML report path [DB name + .html].")
@click.option("--pgn", "pgn_out", default=None, help="Also export the games in their record format: PGN (chess), .psq (gomoku).")
@click.option("--csv", "csv_out", default=None, help="Also export results as CSV.")
@click.option("--json", "json_out", default=None, help="Also export results as JSON.")
@click.option("--anchor", default=None)
def report(db: str, html_out: str | None, pgn_out: str | None, csv_out: str | None, json_out: str | None,
           anchor: str | None) -> None:
    """A self-contained HTML report (Elo chart, crosstable, game viewer) and exports."""
    from arena.export import csv_text, games_text, json_text
    from arena.html import html_report
    from arena.report import default_anchor, rating_sections

    with _open(db) as store:
        players = store.players()
        anchor = anchor or default_anchor(players, store.player_specs())
        if anchor is not None and players and anchor not in players:
            raise click.ClickException(f"anchor {anchor!r} is not a player (players: {', '.join(players)})")
        records = store.records()
        sections = rating_sections(store.results(), players, anchor)
    target = html_out or str(Path(db).with_suffix(".html"))
    Path(target).write_text(html_report(sections, records, title=f"PlyZero arena: {Path(db).name}"),
                            encoding="utf-8")
    click.echo(f"HTML report written to {target}")
    for path, text in ((pgn_out, games_text), (csv_out, csv_text), (json_out, json_text)):
        if path:
            Path(path).write_text(text(records), encoding="utf-8")
            click.echo(f"Written {path}")

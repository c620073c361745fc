"""Linkage among more than two parties: one run for every pair, driven one after another.

FedSim's extension to several parties (its appendix C) links the secondary parties with each
other one-to-one first, then each with the primary party, which holds the labels. A session
does that: its pairs are the secondaries' pairs in the order given, then primary-secondary
pairs. Each pair is an ordinary two-party run between daemons that list each other as peers,
named `<session>-<k>` for its k-th pair, so an interrupted session resumes where it stopped.
"""

from __future__ import annotations

import itertools
import re
import time
from typing import Any

from pprl.party.coordination.coordinator import Coordinator, CoordinatorError, Endpoint
from pprl.party.storage.run_ids import check_run_id, new_run_id
from pprl.protocol.phases import LAST_PHASE, Phase

# <session>-<k>: the k-th pair's run; a session id is a run id short enough to take a suffix.
_PAIR_RUN = re.compile(r"(?P<session>[A-Za-z0-9][A-Za-z0-9_-]{0,59})-(?P<k>[0-9]{1,3})")
MAX_SESSION_ID = 60


def session_pairs(parties: list[Endpoint], primary: str) -> list[tuple[str, str]]:
    """Every pair of parties by name, secondaries' pairs first, then primary with each."""
    names = [p.name for p in parties]
    if primary not in names:
        raise CoordinatorError(f"the primary party {primary!r} is not among {', '.join(names)}")
    secondaries = [n for n in names if n != primary]
    return [*itertools.combinations(secondaries, 2), *((primary, s) for s in secondaries)]


def pair_run_id(session_id: str, k: int) -> str:
    return check_run_id(f"{session_id}-{k}")


def check_session_id(session_id: str) -> str:
    check_run_id(session_id)
    if len(session_id) > MAX_SESSION_ID:
        raise CoordinatorError(
            f"session id {session_id!r} is longer than {MAX_SESSION_ID} characters"
        )
    return session_id


class Session:
    """Drives the runs of every pair of `parties` (all reachable through one coordinator
    identity) one pair at a time: a daemon works on one run at a time."""

    def __init__(self, coordinator: Coordinator, primary: str) -> None:
        self.coordinator = coordinator
        self.pairs = session_pairs(coordinator.parties, primary)
        self.primary = primary

    def _unfinished_session(self) -> str | None:
        """The session whose pair runs are the latest on the parties and not all done."""
        found = set()
        for party in self.coordinator.parties:
            latest = self.coordinator.status(party).run_id
            match = _PAIR_RUN.fullmatch(latest)
            if match and int(match["k"]) < len(self.pairs):
                found.add(match["session"])
        for session_id in sorted(found):
            if any(self._completed(session_id, k) < LAST_PHASE for k in range(len(self.pairs))):
                return session_id
        return None

    def _completed(self, session_id: str, k: int) -> Phase:
        """The last phase both parties of pair k completed in its run (NEW: not begun)."""
        run_id = pair_run_id(session_id, k)
        by_name = {p.name: p for p in self.coordinator.parties}
        statuses = [self.coordinator.status(by_name[name], run_id) for name in self.pairs[k]]
        if any(s.run_id != run_id for s in statuses):
            return Phase.NEW
        return Phase(min(s.completed for s in statuses))

    def run(
        self, session_id: str | None = None, new: bool = False, until: Phase = LAST_PHASE
    ) -> dict[str, Any]:
        """Every pair's run to the end, pairs already linked reported, not run again.

        A daemon holds one open run at a time, so `until` short of the last phase stops the
        session at the first pair not yet linked, once that pair's run is through `until`;
        the next call resumes there.
        """
        if session_id is not None:
            check_session_id(session_id)
        elif not new:
            session_id = self._unfinished_session()
        session_id = session_id or new_run_id()
        started = time.perf_counter()
        out = self.coordinator.printer
        out.line(f"session {session_id}: {len(self.pairs)} pairs, primary {self.primary}")
        runs = []
        by_name = {p.name: p for p in self.coordinator.parties}
        for k, pair in enumerate(self.pairs):
            run_id = pair_run_id(session_id, k)
            out.line(f"pair {k + 1}/{len(self.pairs)}: {pair[0]} and {pair[1]} (run {run_id})")
            if self._completed(session_id, k) is LAST_PHASE:
                out.line("  already linked")
                parties = (by_name[pair[0]], by_name[pair[1]])
                summary = self.coordinator.summary(parties, run_id, resumed_after=LAST_PHASE)
            else:
                summary = self.coordinator.run(run_id=run_id, until=until, pair=pair)
            runs.append({"pair": list(pair), **summary})
            if until < LAST_PHASE and self._completed(session_id, k) < LAST_PHASE:
                out.line(f"session {session_id}: stopped after {until.name} of pair {k + 1}")
                break
        return {
            "session_id": session_id,
            "primary": self.primary,
            "seconds": round(time.perf_counter() - started, 3),
            "pair_count": len(self.pairs),
            "linked_pairs": sum(1 for r in runs if r["completed"] == LAST_PHASE.name.lower()),
            "pairs": runs,
        }

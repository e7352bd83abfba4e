"""Journal authoring: build valid event sequences for examples, tests, benchmarks and the demo.

Ids and times here come from a counter, so a scenario is the same every time it is built. The
builder steps every event through the core as it goes, so it always knows the quest it is
writing for (a proof bundle must match the quest's revision, head, base and risk).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from bot.core import EVENT_ADAPTER, Event, Policy, ProofBundle, Quest, steps
from bot.core.effects import Effect
from bot.core.proof import CheckRecord, Reproduction

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
ZERO_DIGEST = "0" * 64


class JournalBuilder:
    def __init__(self, quest_id: str = "q-1", *, repo: str = "octo/demo",
                 policy: Policy | None = None, start: datetime = EPOCH) -> None:
        self.quest_id = quest_id
        self.repo = repo
        self.policy = policy or Policy()
        self.start = start
        self.events: list[Event] = []
        """The journal: every event applied, each followed by the follow-ups it set off."""
        self.inputs: list[Event] = []
        """The events from outside alone, as they would arrive: without the follow-ups the
        journal adds itself (what a benchmark or a test feeds to ``Journal.apply``)."""
        self.effects: list[Effect] = []
        self.quest: Quest | None = None

    def event(self, type_: str, **fields: Any) -> Event:
        """Build the next event without applying it."""
        n = len(self.events)
        data = {"type": type_, "id": f"{self.quest_id}-e{n}", "quest_id": self.quest_id,
                "at": self.start + timedelta(seconds=n), **fields}
        return EVENT_ADAPTER.validate_python(data)

    def add(self, type_: str, **fields: Any) -> Event:
        """Build the next event, apply it (raising if the core refuses) and record it."""
        ev = self.event(type_, **fields)
        self.apply(ev)
        return ev

    def apply(self, ev: Event) -> None:
        """Apply an event and record it, with the follow-ups it sets off, as the journal
        does (raising, and recording nothing, if the core refuses it)."""
        for event, t in steps(self.quest, ev, self.policy):
            self.quest = t.quest
            self.effects.extend(t.effects)
            self.events.append(event)
        self.inputs.append(ev)

    def bundle(self, *, passing: bool = True) -> ProofBundle:
        q = self._q()
        assert q.head is not None and q.base is not None
        check = CheckRecord(name="tests", command=("pytest", "-q"), exit_code=0 if passing else 1,
                            output_sha256=ZERO_DIGEST)
        repro = Reproduction(name=q.reproduction or "repro", command=("pytest", "-q", "-k", "r"),
                             base_exit_code=1, head_exit_code=0)
        return ProofBundle(quest_id=q.id, revision=q.revision, risk=q.risk, base=q.base,
                           head=q.head, checks=(check,), reproduction=repro)

    def prove(self) -> Event:
        b = self.bundle()
        return self.add("proof_completed", bundle=b.as_json(), digest=b.digest())

    def decide(self, checkpoint: str, verdict: str = "approve", *, actor: str = "maintainer",
               **fields: Any) -> Event:
        return self.add("checkpoint_decided", checkpoint=checkpoint, verdict=verdict,
                        actor=actor, **fields)

    def _q(self) -> Quest:
        assert self.quest is not None, "no quest yet: add signal_sensed first"
        return self.quest

    # whole stretches of the main line

    def sense(self, *, route: str = "auto_fix", fingerprint: str = "fp-1",
              base: str = "base0") -> JournalBuilder:
        self.add("signal_sensed", repo=self.repo, fingerprint=fingerprint, kind="check_failure",
                 severity="high", title="tests fail on main", source="check_run:1", base=base)
        self.add("triaged", route=route)
        return self

    def to_ready(self, *, head: str = "head1") -> JournalBuilder:
        """From researching through A and B to C, with a patch and a bound proof."""
        self.add("hypothesis_written", summary="off-by-one in pager")
        self.decide("A")
        self.add("reproduced", check="test_pager_last_page")
        self.add("plan_written", summary="fix the bound", risk="low")
        self.decide("B")
        self.add("patch_pushed", head=head, pusher="questbot[bot]")
        self.prove()
        return self

    def land_and_close(self, *, merge_sha: str = "merge1") -> JournalBuilder:
        self.decide("C")
        self.add("landed", merge_sha=merge_sha)
        self.add("watch_clean")
        return self


def main_line(quest_id: str = "q-1", policy: Policy | None = None) -> JournalBuilder:
    """A quest that goes from a failing check to closed along the main line."""
    return JournalBuilder(quest_id, policy=policy).sense().to_ready().land_and_close()

"""The proof bundle's fast canonical form is exactly the generic one.

``ProofBundle.canonical_json`` lets pydantic write the bundle, its fields declared in sorted
order, because the core checks a digest on every ``proof_completed``; the documented form is
``canonical_json(as_json())``.
These tests hold the two byte-identical for arbitrary bundles (any text, empty and long
commands, no reproduction) and fail when a field is declared out of order.
"""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core import CheckRecord, ProofBundle, Reproduction, Risk, canonical_digest
from bot.core.canonical import canonical_json

texts = st.text()  # any code point but surrogates: quotes, backslashes, controls, non-ASCII
ints = st.integers(min_value=-(2**70), max_value=2**70)
commands = st.lists(texts, max_size=4).map(tuple)
checks = st.builds(CheckRecord, name=texts, command=commands, exit_code=ints,
                   output_sha256=st.from_regex(r"\A[0-9a-f]{64}\Z"))
reproductions = st.none() | st.builds(Reproduction, name=texts, command=commands,
                                      base_exit_code=ints, head_exit_code=ints)
bundles = st.builds(ProofBundle, quest_id=texts, revision=st.integers(min_value=1, max_value=2**70),
                    risk=st.sampled_from(Risk), base=texts, head=texts,
                    checks=st.lists(checks, max_size=3).map(tuple), reproduction=reproductions)


@settings(max_examples=int(os.environ.get("QUESTBOT_PROPERTY_EXAMPLES", "75")) * 4)
@given(bundles)
def test_fast_canonical_form_is_the_generic_one(bundle: ProofBundle) -> None:
    assert bundle.canonical_json() == canonical_json(bundle.as_json())
    assert bundle.digest() == canonical_digest(bundle.as_json())


def test_a_validated_bundle_from_json_round_trips_to_the_same_digest() -> None:
    bundle = ProofBundle.model_validate_json(
        '{"quest_id":"q-\\u00e9\\"\\\\","revision":3,"risk":"high","base":"b\\n","head":"h\\u2028",'
        '"checks":[{"name":"t\\u0001","command":["pytest","-q"],"exit_code":0,'
        '"output_sha256":"' + "a" * 64 + '"}],'
        '"reproduction":{"name":"r","command":[],"base_exit_code":1,"head_exit_code":0}}')
    assert bundle.canonical_json() == canonical_json(bundle.as_json())
    assert bundle.digest() == canonical_digest(bundle.as_json())


def test_every_field_is_declared_in_canonical_order() -> None:
    # pydantic writes fields in declaration order; canonical_json relies on that being sorted
    for model in (ProofBundle, CheckRecord, Reproduction):
        declared = list(model.model_fields)
        assert declared == sorted(declared), model.__name__

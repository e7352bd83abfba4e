"""The agent run, and the adapters that run it for quests.

Pure (no clock, no randomness, no I/O): ``machine`` (the run's transition table), ``result``
(the terminal result, and the one place ``verified`` is derived), ``outcome`` (a terminal
result as a provider-neutral outcome), ``evidence`` (the bundle a person judges), ``task``
(what an agent is asked and what it answers) and ``validation`` (claims judged against the
checkout; its file reads go through the ``RepositoryView`` protocol, so the caller decides
what "the checkout" is — ``CheckoutView``, the one that reads a directory, is its only I/O);
``errors`` holds the package's exceptions.

Adapters, which run processes and touch git, the disk and Redis: ``stages`` (one quest stage
as one run), ``runs`` and ``proofs`` (the ``start_agent``, ``stop_agent`` and ``run_proof``
effect adapters), ``proof_runner`` (a repository's own checks in a fresh worktree),
``sandbox`` (bubblewrap: the one way repository code and agents' commands are run),
``workspace`` (a commit's files on disk, and a change back onto the quest branch),
``evidence_store`` (what each run established, in Redis), and the agent kinds: ``model`` (a
package: a model at the worker's endpoint, in a tool-using conversation over the checkout),
``command`` (a program of the repository's choosing) and ``scripted`` (a test tool; its
script for the demo's sample is in the test stack, ``questbot_testing.sample``).

Nothing here imports the GitHub adapter, which sits above this package: how a run reads on
GitHub — the evidence as Markdown, the outcome as a check-run conclusion — is the adapter's
(its ``evidence`` and ``render`` modules).
"""

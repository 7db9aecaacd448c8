"""Federation save and restore from Python: two federates on inproc save under a
label (each keeping bytes of its own state with the RTI's), change their state, and
restore it: the RTI state (instances, ownership) and each federate's bytes come back.
A timed save starts at the save's time; failures and aborts reach every federate
with their reason; misuse raises the standard's exceptions."""

from __future__ import annotations

import threading
import time

import pytest

import glidepath
from recorder import Recorder, evoke_until


class Pair:
    """Federates `alpha` and `bravo`; alpha registers a BenchObject bravo knows."""

    def __init__(self, rti, name: str) -> None:
        self.amb = {"alpha": Recorder(), "bravo": Recorder()}
        self.fed = {n: rti.join_federation_execution(name, a, name=n) for n, a in self.amb.items()}
        a, b = self.fed["alpha"], self.fed["bravo"]
        self.cls = a.get_object_class_handle("BenchObject")
        self.payload = a.get_attribute_handle(self.cls, "payload")
        for f in (a, b):
            f.publish_object_class_attributes(self.cls, [self.payload])
            f.subscribe_object_class_attributes(self.cls, [self.payload])
        self.instance = a.register_object_instance(self.cls)
        evoke_until(b, self.amb["bravo"], "discover_object_instance")

    def both(self):
        return [(self.fed[n], self.amb[n]) for n in ("alpha", "bravo")]


@pytest.fixture
def federation(fom, tmp_path):
    rti = glidepath.Rti(save_dir=str(tmp_path))
    name = f"save-{time.monotonic_ns()}"
    rti.create_federation_execution(name, [fom])
    pair = Pair(rti, name)
    yield rti, name, pair, tmp_path
    for f in pair.fed.values():
        if not f.is_resigned:
            f.resign_federation_execution()
    rti.destroy_federation_execution(name)


def test_save_change_and_restore(federation):
    rti, name, p, save_dir = federation
    a, b = p.fed["alpha"], p.fed["bravo"]
    state = {"alpha": b"alpha-state-1", "bravo": b"bravo-state-1"}

    a.request_federation_save("before")
    for f, amb in p.both():
        assert evoke_until(f, amb, "initiate_federate_save") == ("before", None)
    # One save at a time.
    with pytest.raises(glidepath.SaveInProgress):
        b.request_federation_save("another")
    # Complete comes after begun.
    with pytest.raises(glidepath.FederateHasNotBegunSave):
        a.federate_save_complete(state["alpha"])
    a.federate_save_begun()
    a.query_federation_save_status()
    statuses = dict(evoke_until(a, p.amb["alpha"], "federation_save_status_response")[0])
    assert statuses == {a.handle: "FederateSaving", b.handle: "FederateInstructedToSave"}
    a.federate_save_complete(state["alpha"])
    b.federate_save_begun()
    b.federate_save_complete(user_state=state["bravo"])
    for f, amb in p.both():
        assert evoke_until(f, amb, "federation_saved") == ("before",)
    assert (save_dir / name / "before.gpsave").is_file()
    a.query_federation_save_status()
    statuses = dict(evoke_until(a, p.amb["alpha"], "federation_save_status_response", 2)[0])
    assert statuses == {a.handle: "NoSaveInProgress", b.handle: "NoSaveInProgress"}

    # The state changes: alpha registers a second object and gives the first away.
    second = a.register_object_instance(p.cls)
    a.unconditional_attribute_ownership_divestiture(p.instance, [p.payload])
    assert not a.is_attribute_owned_by_federate(p.instance, p.payload)
    assert a.get_object_instance_name(second) is not None

    b.request_federation_restore("before")
    assert evoke_until(b, p.amb["bravo"], "request_federation_restore_succeeded") == ("before",)
    for n, (f, amb) in zip(("alpha", "bravo"), p.both()):
        assert evoke_until(f, amb, "federation_restore_begun") == ("before",)
        label, fed_name, handle, saved_as, user_state = evoke_until(f, amb, "initiate_federate_restore")
        # The same federation: each federate takes its own place again.
        assert (label, fed_name, handle, saved_as) == ("before", n, f.handle, f.handle)
        assert user_state == state[n]
    # The RTI state is the saved one: the first object owned again, the second gone.
    assert a.is_attribute_owned_by_federate(p.instance, p.payload)
    assert a.get_object_instance_name(second) is None
    a.federate_restore_complete()
    a.query_federation_restore_status()
    statuses = dict(evoke_until(a, p.amb["alpha"], "federation_restore_status_response")[0])
    assert statuses == {
        a.handle: "FederateWaitingForFederationToRestore",
        b.handle: "FederateInstructedToRestore",
    }
    # Time stands still while the restore is in progress.
    with pytest.raises(glidepath.RestoreInProgress):
        b.request_federation_save("during-restore")
    b.federate_restore_complete()
    for f, amb in p.both():
        assert evoke_until(f, amb, "federation_restored") == ("before",)
    # The restored federation runs on: alpha updates what it owns again.
    a.update_attribute_values(p.instance, {p.payload: b"after"})
    deadline = time.monotonic() + 20
    while not any(v.get(p.payload) == b"after" for _, _, v, _, _ in p.amb["bravo"].named("reflect_attribute_values")):
        assert time.monotonic() < deadline, "no reflection after the restore"
        b.evoke(0.05)

    # A label never saved: the request fails with the reason.
    a.request_federation_restore("never")
    label, reason = evoke_until(a, p.amb["alpha"], "request_federation_restore_failed")
    assert label == "never" and "never" in reason


def test_failed_and_aborted_saves_and_restores(federation):
    _, _, p, _ = federation
    a, b = p.fed["alpha"], p.fed["bravo"]
    # A federate reports its save not complete: the save fails for everyone.
    a.request_federation_save("bad")
    for f, amb in p.both():
        evoke_until(f, amb, "initiate_federate_save")
        f.federate_save_begun()
    a.federate_save_complete(b"fine")
    b.federate_save_not_complete()
    for f, amb in p.both():
        assert evoke_until(f, amb, "federation_not_saved") == ("bad", "FederateReportedFailure")
    # An aborted save.
    b.request_federation_save("aborted")
    for f, amb in p.both():
        evoke_until(f, amb, "initiate_federate_save", 2)
    a.abort_federation_save()
    for f, amb in p.both():
        assert evoke_until(f, amb, "federation_not_saved", 2) == ("aborted", "SaveAborted")
    # A good save, then a restore that one federate reports not complete, then one
    # that is aborted.
    a.request_federation_save("good")
    for f, amb in p.both():
        evoke_until(f, amb, "initiate_federate_save", 3)
        f.federate_save_begun()
        f.federate_save_complete()
    for f, amb in p.both():
        evoke_until(f, amb, "federation_saved")
    a.request_federation_restore("good")
    for f, amb in p.both():
        # No user state saved: empty bytes back.
        assert evoke_until(f, amb, "initiate_federate_restore")[4] == b""
    a.federate_restore_not_complete()
    b.federate_restore_complete()
    for f, amb in p.both():
        assert evoke_until(f, amb, "federation_not_restored") == ("good", "FederateReportedFailure")
    b.request_federation_restore("good")
    for f, amb in p.both():
        evoke_until(f, amb, "initiate_federate_restore", 2)
    b.abort_federation_restore()
    for f, amb in p.both():
        assert evoke_until(f, amb, "federation_not_restored", 2) == ("good", "RestoreAborted")


def test_misuse_raises_the_standards_exceptions(federation):
    _, _, p, _ = federation
    a, b = p.fed["alpha"], p.fed["bravo"]
    with pytest.raises(glidepath.SaveNotInitiated):
        a.federate_save_begun()
    with pytest.raises(glidepath.SaveNotInitiated):
        a.federate_save_complete(b"x")
    with pytest.raises(glidepath.SaveNotInitiated):
        a.federate_save_not_complete()
    with pytest.raises(glidepath.SaveNotInProgress):
        a.abort_federation_save()
    with pytest.raises(glidepath.RestoreNotRequested):
        a.federate_restore_complete()
    with pytest.raises(glidepath.RestoreNotRequested):
        a.federate_restore_not_complete()
    with pytest.raises(glidepath.RestoreNotInProgress):
        a.abort_federation_restore()
    with pytest.raises(glidepath.IllegalLabel):
        a.request_federation_save("")
    # A save requested twice: the second is refused while the first runs.
    a.request_federation_save("once")
    with pytest.raises(glidepath.SaveInProgress):
        a.request_federation_save("once")
    with pytest.raises(glidepath.SaveInProgress):
        b.request_federation_restore("once")
    for f, amb in p.both():
        evoke_until(f, amb, "initiate_federate_save")
    with pytest.raises(glidepath.SaveInProgress):
        b.time_advance_request(1.0)
    a.abort_federation_save()
    for e in (
        glidepath.SaveInProgress,
        glidepath.RestoreInProgress,
        glidepath.SaveNotInitiated,
        glidepath.SaveNotInProgress,
        glidepath.FederateHasNotBegunSave,
        glidepath.RestoreNotRequested,
        glidepath.RestoreNotInProgress,
        glidepath.IllegalLabel,
        glidepath.SaveNotPossible,
    ):
        assert issubclass(e, glidepath.RTIexception)


def test_a_timed_save_starts_at_its_time(federation):
    _, _, p, _ = federation
    a, b = p.fed["alpha"], p.fed["bravo"]
    for f, amb in p.both():
        f.enable_time_regulation(1.0)
        evoke_until(f, amb, "time_regulation_enabled")
        f.enable_time_constrained()
        evoke_until(f, amb, "time_constrained_enabled")
    a.request_federation_save("t3", time=3.0)
    # Not before the save's time.
    for f, amb in p.both():
        f.evoke(0.1)
        assert amb.named("initiate_federate_save") == []
    for t in (1.0, 2.0, 3.0):
        for f, _ in p.both():
            f.time_advance_request(t)
        for f, amb in p.both():
            evoke_until(f, amb, "time_advance_grant", int(t))
    for f, amb in p.both():
        assert evoke_until(f, amb, "initiate_federate_save") == ("t3", 3.0)
        with pytest.raises(glidepath.SaveInProgress):
            f.time_advance_request(4.0)
        f.federate_save_begun()
        f.federate_save_complete(f.name.encode())
    for f, amb in p.both():
        evoke_until(f, amb, "federation_saved")
    # A save time already passed.
    with pytest.raises(glidepath.LogicalTimeAlreadyPassed):
        a.request_federation_save("past", time=1.0)


def test_a_federate_in_a_time_advance_cannot_save(federation):
    _, _, p, _ = federation
    a, b = p.fed["alpha"], p.fed["bravo"]
    for f, amb in p.both():
        f.enable_time_regulation(1.0)
        evoke_until(f, amb, "time_regulation_enabled")
        f.enable_time_constrained()
        evoke_until(f, amb, "time_constrained_enabled")
    # Alpha asks to advance; bravo does not, so alpha waits for its grant.
    a.time_advance_request(5.0)
    b.request_federation_save("mid-advance")
    for f, amb in p.both():
        evoke_until(f, amb, "initiate_federate_save")
        f.federate_save_begun()
    with pytest.raises(glidepath.SaveNotPossible, match="time advance"):
        a.federate_save_complete(b"a")
    b.federate_save_complete(b"b")
    for f, amb in p.both():
        assert evoke_until(f, amb, "federation_not_saved") == ("mid-advance", "FederateReportedFailure")


def test_save_callbacks_reach_an_immediate_ambassador(fom, tmp_path):
    rti = glidepath.Rti(save_dir=str(tmp_path))
    rti.create_federation_execution("immediate-save", [fom])
    done = threading.Event()

    class Saver(glidepath.FederateAmbassador):
        """Answers the save from the callback, on the RTI thread."""

        def __init__(self) -> None:
            self.fed = None
            self.seen: list = []

        def initiate_federate_save(self, label, time):
            self.seen.append(("initiate", label, time))
            self.fed.federate_save_begun()
            self.fed.federate_save_complete(b"immediate")

        def federation_saved(self, label):
            self.seen.append(("saved", label))
            done.set()

    saver = Saver()
    fed = rti.join_federation_execution(
        "immediate-save", saver, name="imm", process_model=glidepath.ProcessModel.IMMEDIATE
    )
    saver.fed = fed
    fed.request_federation_save("now")
    assert done.wait(20), saver.seen
    assert saver.seen == [("initiate", "now", None), ("saved", "now")]
    assert (tmp_path / "immediate-save" / "now.gpsave").is_file()
    assert fed.callback_errors == 0
    saver.fed = None
    fed.resign_federation_execution()
    rti.destroy_federation_execution("immediate-save")

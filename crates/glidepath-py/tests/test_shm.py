"""Python and Rust federates in separate processes of this host through shared memory."""

from __future__ import annotations

import os
import subprocess

import pytest

import glidepath
import lockstep

STEPS = 50


def _system(test: str) -> str:
    return f"py-{test}-{os.getpid()}"


def test_lockstep_with_rust_process_over_shm(fom, rust_peer):
    name = _system("lockstep")
    host = glidepath.Rti.host_shm_system(name)
    rti = glidepath.Rti(transport="shm", shm_name=name)
    assert rti.transport == "shm"
    rti.create_federation_execution("lockstep", [fom])
    amb = lockstep.Lockstep()
    fed = rti.join_federation_execution("lockstep", amb, name="python")
    peer = subprocess.Popen(
        [rust_peer, "lockstep", "lockstep", str(STEPS), "--transport", "shm", "--shm-name", name],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lockstep.run(fed, amb, STEPS)
        out, err = peer.communicate(timeout=60)
    finally:
        peer.kill()
    assert peer.returncode == 0, err
    assert out.strip() == f"grants={STEPS} matched={STEPS} last_grant={STEPS}"
    assert amb.matched == STEPS
    fed.resign_federation_execution()
    rti.destroy_federation_execution("lockstep")
    host.close()
    assert not any(f.startswith(f"glidepath-{name}.") for f in os.listdir("/dev/shm"))


def test_shm_without_a_host_or_with_a_bad_name_says_what_is_wrong():
    name = _system("nohost")
    with pytest.raises(glidepath.RTIexception) as missing:
        glidepath.Rti(transport="shm", shm_name=name)
    assert f"glidepath server --transport shm --shm-name {name}" in str(missing.value)
    with pytest.raises(glidepath.RTIexception) as bad:
        glidepath.Rti.host_shm_system("../etc")
    assert "shm_name" in str(bad.value) or "shm-name" in str(bad.value)
    host = glidepath.Rti.host_shm_system(name)
    with pytest.raises(glidepath.RTIexception) as twice:
        glidepath.Rti.host_shm_system(name)
    assert "already" in str(twice.value)
    host.close()

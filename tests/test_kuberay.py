"""The KubeRay manifest for TPU-only records: it parses, and what the runner asks of a cluster fits its TPU
worker group (and nothing lands on its head)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml

from fakewheels import fake_record
from xlakb.cli import build_parser
from xlakb.executors import fits, task_resources
from xlakb.records import load_record

DEPLOY = Path(__file__).resolve().parent.parent / "deploy" / "kuberay"
MANIFEST = DEPLOY / "raycluster-tpu.yaml"
UNITS = {"": 1, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}


def quantity(text) -> float:
    """A Kubernetes quantity ("24", "500m", "44Gi") as a number."""
    number, unit = re.fullmatch(r"([0-9.]+)([A-Za-z]*)", str(text)).groups()
    return float(number) * UNITS[unit]


def ray_resources(pod: dict, start_params: dict) -> dict[str, float]:
    """The Ray resources KubeRay gives a pod: its container's limits, unless ``rayStartParams`` say otherwise."""
    limits = pod["spec"]["containers"][0]["resources"]["limits"]
    offered = {
        "CPU": quantity(limits["cpu"]),
        "memory": quantity(limits["memory"]),
        "TPU": quantity(limits.get("google.com/tpu", 0)),
    }
    if "num-cpus" in start_params:
        offered["CPU"] = float(start_params["num-cpus"])
    return offered


def tpu_record(kb: Path, devices: int, **resources) -> dict:
    path = fake_record(kb, f"tpu-{devices}")
    data = yaml.safe_load(path.read_text())
    data["environment"].update(run_on="tpu", devices=devices, **({"resources": resources} if resources else {}))
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    return task_resources(load_record(kb, f"tpu-{devices}"))


def test_manifest_parses_and_its_tpu_group_runs_what_the_runner_asks(kb):
    docs = [d for d in yaml.safe_load_all(MANIFEST.read_text()) if d]
    assert len(docs) == 1 and docs[0]["apiVersion"] == "ray.io/v1" and docs[0]["kind"] == "RayCluster"
    spec = docs[0]["spec"]
    groups = spec["workerGroupSpecs"]
    tpu = [g for g in groups if "google.com/tpu" in g["template"]["spec"]["containers"][0]["resources"]["limits"]]
    assert len(tpu) == 1
    group = tpu[0]
    pod = group["template"]
    container = pod["spec"]["containers"][0]
    assert container["resources"]["limits"] == container["resources"]["requests"]  # GKE TPU pods ask what they use
    selector = pod["spec"]["nodeSelector"]
    assert selector["cloud.google.com/gke-tpu-accelerator"] and group["numOfHosts"] == 1
    chips = 1
    for side in selector["cloud.google.com/gke-tpu-topology"].split("x"):
        chips *= int(side)
    offered = ray_resources(pod, group["rayStartParams"])
    assert offered["TPU"] == chips == 4  # one single-host slice: every chip of the topology in one pod

    assert fits(tpu_record(kb, 4), offered)  # a record on 4 chips takes one host
    assert fits(tpu_record(kb, 1, cpus=8, memory_gb=16), offered)
    assert not fits(tpu_record(kb, 8), offered)  # 8 chips: more than a host has
    assert not fits(tpu_record(kb, 2, memory_gb=64), offered)  # more memory than the pod has

    head = spec["headGroupSpec"]
    assert not fits(tpu_record(kb, 4), ray_resources(head["template"], head["rayStartParams"]))
    assert ray_resources(head["template"], head["rayStartParams"])["CPU"] == 0  # no probe lands on the head

    images = {c["image"] for c in head["template"]["spec"]["containers"] + pod["spec"]["containers"]}
    assert len(images) == 1  # head and workers run the same xlakb
    assert f"FROM rayproject/ray:{spec['rayVersion']}-" in (DEPLOY / "Dockerfile").read_text()
    envs = {e["name"]: e["value"] for e in container["env"]}
    assert envs["XLAKB_CACHE_DIR"].startswith(container["volumeMounts"][0]["mountPath"])  # the worker's own cache


def test_the_documented_command_is_a_real_xlakb_command():
    lines = [ln[1:].strip() for ln in MANIFEST.read_text().splitlines() if ln.startswith("#   xlakb matrix")]
    assert len(lines) == 1
    args = build_parser().parse_args(shlex.split(lines[0])[1:])
    assert args.func.__name__ == "cmd_matrix" and args.runner == "uv" and args.cluster.startswith("ray://")

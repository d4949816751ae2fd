"""`kreplay set image TYPE NAME CONTAINER=IMAGE...`: new container images, appended as a
`patch` operation (a JSON patch replacing each image), with kubectl's `image updated`."""

from __future__ import annotations

import argparse

from replay.cli.common import (
    Parents,
    Subparsers,
    add_all_namespaces,
    add_at,
    add_bool,
    add_dry_run,
    add_filenames,
    add_record,
    add_selector,
)
from replay.cli.output import add_output_flags

SUBCOMMANDS = {"image": "Update the image of a pod template"}
DESCRIPTION = """Configure application resources.

 These commands help you make changes to existing application resources."""
EXAMPLES = ""

IMAGE_DESCRIPTION = """Update existing container image(s) of resources.

 Possible resources include (case insensitive):

        pod (po), deployment (deploy), daemonset (ds), statefulset (sts), replicaset (rs)"""

IMAGE_EXAMPLES = """  # Set the fluentd-elasticsearch daemon set's container image, recording the command as the change-cause
  kreplay set image ds/fluentd-elasticsearch fluentd-elasticsearch=k8s.gcr.io/fluentd-elasticsearch:v2.2.0 --record -n=kube-system

  # Set a deployment's web-server container image (TYPE NAME form, flags anywhere)
  kreplay set image deploy web-app web-server=nginx:1.16.0 --record=true

  # Update the image of every container of a stateful set
  kreplay set image statefulset nginx-web '*=nginx:1.15.0'

  # Show what the controllers would do, without appending anything
  kreplay set image sts/nginx-web nginx=nginx:1.15.0 --dry-run=server"""

_WITH_TEMPLATES = ("DaemonSet", "StatefulSet", "Deployment", "ReplicaSet")


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser("image", parents=[parents.store, parents.namespace, parents.write], help=SUBCOMMANDS["image"], description=IMAGE_DESCRIPTION, epilog=IMAGE_EXAMPLES, usage="kreplay set image (-f FILENAME | TYPE NAME) CONTAINER_NAME_1=CONTAINER_IMAGE_1 ... CONTAINER_NAME_N=CONTAINER_IMAGE_N [options]")
    p.add_argument("arguments", nargs="*", metavar="TYPE NAME CONTAINER=IMAGE")
    add_bool(p, "--all", help="Select all resources, in the namespace of the specified resource types")
    add_selector(p)
    add_all_namespaces(p)
    add_filenames(p, "identifying the resource to get from a server")
    add_at(p)
    add_record(p)
    add_dry_run(p)
    add_output_flags(p, tables=False)
    p.set_defaults(func=cmd_set_image)


def _containers_path(kind: str) -> str:
    return "/spec/template/spec" if kind in _WITH_TEMPLATES else "/spec"


def cmd_set_image(args: argparse.Namespace) -> int:
    from engine.operations import Patch
    from replay.cli import resources
    from replay.cli.common import (
        UsageError,
        UserError,
        cause_of,
        commit,
        live_targets,
        load_cluster,
        noun,
        open_store,
        operation_time,
        report_errors,
    )
    from replay.cli.output import check_format

    resource_args = [a for a in args.arguments if "=" not in a]
    images: dict[str, str] = {}
    for spec in (a for a in args.arguments if "=" in a):
        name, _, image = spec.partition("=")
        if not name or not image:
            raise UsageError(f"invalid image spec: {spec}", verb="set image")
        images[name] = image
    if not images:
        raise UsageError("at least one image update is required", verb="set image")
    check_format(args, tables=False)
    with open_store(args, write=True) as store:
        cluster = load_cluster(store)
        source = resources.Source(cluster, store)
        infos, errors = live_targets(args, resource_args, source, verb="set image")
        at = operation_time(args, cluster)
        operations, messages, targets = [], [], []
        for info in infos:
            if info.kind not in (*_WITH_TEMPLATES, "Pod"):
                raise UserError(f"error: {resources.plural(info.kind)} \"{info.name}\": the object has no pod template to set an image in")
            spec = info.obj.spec.template.spec if info.kind in _WITH_TEMPLATES else info.obj.spec
            base = _containers_path(info.kind)
            patch = []
            for name, image in images.items():
                found = False
                for field, containers in (("initContainers", getattr(spec, "init_containers", None) or []), ("containers", spec.containers)):
                    for i, container in enumerate(containers):
                        if name in ("*", container.name):
                            found = True
                            if container.image != image:
                                patch.append({"op": "replace", "path": f"{base}/{field}/{i}/image", "value": image})
                if not found:
                    raise UserError(f'error: unable to find container named "{name}"')
            cause = cause_of(args)
            if patch or cause:
                operations.append(Patch(at=at, kind=info.kind, namespace=info.namespace, name=info.name, json_patch=patch, actor="kubectl", cause=cause))
            messages.append(f"{noun(info.obj)} image updated")
            targets.append((info.kind, info.namespace, info.name))
        commit(store, operations, args, messages, targets)
    return report_errors(errors)

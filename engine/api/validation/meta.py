"""Metadata and label selectors: mirrors apimachinery's `pkg/api/validation`
(`ValidateObjectMeta`, `ValidateObjectMetaUpdate`, `ValidateAnnotations`,
`ValidateNonnegativeField`, `ValidateImmutableField`) and `pkg/apis/meta/v1/validation`
(`ValidateLabels`, `ValidateLabelName`, `ValidateLabelSelector`), plus how Go prints a
LabelSelector and a label map in a message.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from engine.api.objects import LabelSelector, ObjectMeta, OwnerReference
from engine.api.selectors import Selector, SelectorError, from_label_selector
from engine.api.validation.field import (
    Errors,
    GoStruct,
    Stringer,
    forbidden,
    invalid,
    required,
    too_long,
)
from engine.api.validation.formats import dns1123_label, label_value, qualified_name

# --- labels, annotations and generic fields ---------------------------------------------------

_NONNEGATIVE = "must be greater than or equal to 0"


def _mask_trailing_dash(name: str) -> str:
    # mirrors maskTrailingDash (a generateName may end in '-'); upstream drops two characters
    return name[:-2] + "a" if len(name) > 1 and name.endswith("-") else name


def validate_label_name(key: str, path: str) -> Errors:
    # mirrors ValidateLabelName
    return [invalid(path, key, m) for m in qualified_name(key)]


def validate_labels(labels: Mapping[str, str], path: str) -> Errors:
    # mirrors ValidateLabels (keys sorted: Go walks the map in random order)
    errs: Errors = []
    for key in sorted(labels):
        errs += validate_label_name(key, path)
        errs += [invalid(path, labels[key], m) for m in label_value(labels[key])]
    return errs


def validate_annotations(annotations: Mapping[str, str], path: str) -> Errors:
    # mirrors ValidateAnnotations
    errs = [invalid(path, k, m) for k in sorted(annotations) for m in qualified_name(k.lower())]
    if sum(len(k) + len(v) for k, v in annotations.items()) > 256 * 1024:
        errs.append(too_long(path, 256 * 1024))
    return errs


def validate_nonnegative(value: int, path: str) -> Errors:
    # mirrors ValidateNonnegativeField
    return [invalid(path, value, _NONNEGATIVE)] if value < 0 else []


# --- metadata ---------------------------------------------------------------------------------

NameCheck = Callable[[str], list[str]]


def validate_meta(
    meta: ObjectMeta, old: ObjectMeta | None, name_check: NameCheck, namespaced: bool = True
) -> Errors:
    # mirrors ValidateObjectMeta on create and ValidateObjectMetaUpdate on update (name and
    # namespace cannot change, so they are checked once)
    errs: Errors = []
    if old is None:
        if meta.generate_name:
            errs += [
                invalid("metadata.generateName", meta.generate_name, m)
                for m in name_check(_mask_trailing_dash(meta.generate_name))
            ]
        if not meta.name:
            errs.append(required("metadata.name", "name or generateName is required"))
        else:
            errs += [invalid("metadata.name", meta.name, m) for m in name_check(meta.name)]
        if namespaced:
            if not meta.namespace:
                errs.append(required("metadata.namespace"))
            else:
                errs += [
                    invalid("metadata.namespace", meta.namespace, m)
                    for m in dns1123_label(meta.namespace)
                ]
        elif meta.namespace:
            errs.append(forbidden("metadata.namespace", "not allowed on this type"))
    errs += validate_nonnegative(meta.generation, "metadata.generation")
    errs += validate_labels(meta.labels, "metadata.labels")
    errs += validate_annotations(meta.annotations, "metadata.annotations")
    errs += validate_owner_references(meta.owner_references, "metadata.ownerReferences")
    errs += validate_finalizers(meta.finalizers, "metadata.finalizers")
    return errs


def _owner_reference_value(ref: OwnerReference) -> GoStruct:
    # metav1.OwnerReference as json.Marshal prints it (pointers omitted when nil)
    out = GoStruct(apiVersion=ref.api_version, kind=ref.kind, name=ref.name, uid=ref.uid)
    if ref.controller is not None:
        out["controller"] = ref.controller
    if ref.block_owner_deletion is not None:
        out["blockOwnerDeletion"] = ref.block_owner_deletion
    return out


def validate_owner_references(refs: list[OwnerReference], path: str) -> Errors:
    # mirrors ValidateOwnerReferences and validateOwnerReference
    errs: Errors = []
    first_controller = ""
    for ref in refs:
        version = ref.api_version.rpartition("/")[2]
        if not version:
            errs.append(invalid(f"{path}.apiVersion", ref.api_version, "version must not be empty"))
        if not ref.kind:
            errs.append(invalid(f"{path}.kind", ref.kind, "must not be empty"))
        if not ref.name:
            errs.append(invalid(f"{path}.name", ref.name, "must not be empty"))
        if not ref.uid:
            errs.append(invalid(f"{path}.uid", ref.uid, "must not be empty"))
        if (ref.api_version, ref.kind) == ("v1", "Event"):  # BannedOwners
            errs.append(invalid(path, _owner_reference_value(ref), "/v1, Kind=Event is disallowed from being an owner"))
        if ref.controller:
            name = f"{ref.kind}/{ref.name}"
            if first_controller:
                errs.append(
                    invalid(
                        path,
                        [_owner_reference_value(r) for r in refs],
                        'Only one reference can have Controller set to true. Found "true" in '
                        f"references for {first_controller} and {name}",
                    )
                )
            else:
                first_controller = name
    return errs


def validate_finalizers(finalizers: list[str], path: str) -> Errors:
    # mirrors ValidateFinalizers (ValidateFinalizerName is a qualified name)
    errs = [invalid(path, f, m) for f in finalizers for m in qualified_name(f)]
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        errs.append(invalid(path, list(finalizers), "finalizer orphan and foregroundDeletion cannot be both set"))
    return errs


def validate_meta_update(new: ObjectMeta, old: ObjectMeta) -> Errors:
    """What a user's update may not change in metadata: mirrors rest.BeforeUpdate (which keeps
    the stored uid when none is given, ignores creationTimestamp and keeps a deletionTimestamp
    once set) and then ValidateObjectMetaAccessorUpdate's ValidateImmutableField checks."""
    errs: Errors = []
    if new.uid and new.uid != old.uid:
        errs.append(invalid("metadata.uid", new.uid, "field is immutable"))
    if old.deletion_timestamp is None and new.deletion_timestamp is not None:
        errs.append(invalid("metadata.deletionTimestamp", _go_time(new.deletion_timestamp), "field is immutable"))
    return errs


def _go_time(at: datetime) -> Stringer:
    """A time as Go's time.Time.String() prints it: `2026-11-21 00:00:00 +0000 UTC`."""
    text = at.strftime("%Y-%m-%d %H:%M:%S")
    if at.microsecond:
        text += f".{at.microsecond:06d}".rstrip("0")
    offset = at.utcoffset()
    if offset is None or not offset:
        return Stringer(text + " +0000 UTC")
    minutes = int(offset.total_seconds()) // 60
    sign = "+" if minutes >= 0 else "-"
    return Stringer(f"{text} {sign}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d} {sign}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}")


# --- label selectors --------------------------------------------------------------------------


def validate_selector(sel: LabelSelector | None, path: str) -> Errors:
    # mirrors ValidateLabelSelector (strict: label values in expressions must be valid)
    if sel is None:
        return []
    errs = validate_labels(sel.match_labels, f"{path}.matchLabels")
    for i, expr in enumerate(sel.match_expressions):
        at = f"{path}.matchExpressions[{i}]"
        if expr.operator in ("In", "NotIn"):
            if not expr.values:
                errs.append(
                    required(f"{at}.values", "must be specified when `operator` is 'In' or 'NotIn'")
                )
        elif expr.operator in ("Exists", "DoesNotExist"):
            if expr.values:
                errs.append(
                    forbidden(
                        f"{at}.values",
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        else:
            errs.append(invalid(f"{at}.operator", expr.operator, "not a valid selector operator"))
        errs += validate_label_name(expr.key, f"{at}.key")
        for j, value in enumerate(expr.values):
            errs += [invalid(f"{at}.values[{j}]", value, m) for m in label_value(value)]
    return errs


def as_selector(sel: LabelSelector | None) -> Selector | None:
    """metav1.LabelSelectorAsSelector: None where it fails; a nil selector selects nothing."""
    try:
        return from_label_selector(sel)
    except SelectorError:
        return None


def is_empty(sel: LabelSelector) -> bool:
    return not sel.match_labels and not sel.match_expressions


def validate_immutable(new: Any, old: Any, path: str, value: Any) -> Errors:
    # mirrors ValidateImmutableField
    return [] if new == old else [invalid(path, value, "field is immutable")]


# --- values as upstream prints them -----------------------------------------------------------


def selector_value(sel: LabelSelector | None) -> Any:
    """A LabelSelector as Go's json.Marshal prints it (metav1 fields, omitempty)."""
    if sel is None:
        return None
    out = GoStruct()
    if sel.match_labels:
        out["matchLabels"] = dict(sel.match_labels)
    if sel.match_expressions:
        out["matchExpressions"] = [
            GoStruct(
                key=e.key, operator=e.operator, **({"values": list(e.values)} if e.values else {})
            )
            for e in sel.match_expressions
        ]
    return out


def labels_value(labels: Mapping[str, str]) -> Any:
    return dict(labels) if labels else None  # a nil map prints as null

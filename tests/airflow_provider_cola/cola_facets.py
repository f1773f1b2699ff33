"""Helpers of the lineage tests: facets held to their schemas, facets as JSON, a real summary.

openlineage-python 1.54 ships no JSON schema files: its facet classes are generated from the
spec's schemas, and each names the schema it follows (``_get_schema()``). So every facet is
validated, with ``jsonschema``, against a schema built from the installed class (field
names, types, required fields, nothing else), with ``_schemaURL`` held to the class's own.

Shared by ``test_lineage.py`` (the tasks' lineage and the events of a DAG run) and
``test_lineage_facets.py`` (the facets built from a summary).
"""

from __future__ import annotations

import json
import types
import typing

import attrs
import jsonschema

PRODUCER_SCHEMA_KEYS = ("_producer", "_schemaURL")


def _type_schema(hint: typing.Any) -> dict[str, typing.Any]:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        # Optional fields are left out of the JSON when unset (Serde drops None), never null.
        kept = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        assert len(kept) == 1, hint
        return _type_schema(kept[0])
    if hint is typing.Any:
        return {}
    if origin is list:
        return {"type": "array", "items": _type_schema(typing.get_args(hint)[0])}
    if origin is dict:
        key, value = typing.get_args(hint)
        assert key is str, hint
        return {"type": "object", "additionalProperties": _type_schema(value)}
    if attrs.has(hint):
        return facet_schema(hint)
    simple = {bool: "boolean", int: "integer", float: "number", str: "string"}
    return {"type": simple[hint]}


def facet_schema(cls: type) -> dict[str, typing.Any]:
    """The JSON schema of an openlineage-python generated class: its fields, their types,
    the ones without a default required, and no other key."""
    hints = typing.get_type_hints(cls)
    fields = attrs.fields(cls)
    properties = {field.name: _type_schema(hints[field.name]) for field in fields}
    required = [field.name for field in fields if field.default is attrs.NOTHING]
    if "_schemaURL" in properties:
        # Every facet carries both (the spec's BaseFacet requires them); the URL is the class's.
        properties["_schemaURL"] = {"const": cls._get_schema()}
        required = [*PRODUCER_SCHEMA_KEYS, *required]
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def validate(instance: typing.Any, cls: type) -> None:
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **facet_schema(cls)}
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(instance, schema, cls=jsonschema.Draft202012Validator)


def validate_input_facets(dataset: dict[str, typing.Any]) -> None:
    from openlineage.client.facet_v2 import data_quality_assertions_dataset, data_quality_metrics_input_dataset

    classes = {
        "dataQualityAssertions": data_quality_assertions_dataset.DataQualityAssertionsDatasetFacet,
        "dataQualityMetrics": data_quality_metrics_input_dataset.DataQualityMetricsInputDatasetFacet,
    }
    assert set(dataset["inputFacets"]) <= set(classes)
    for key, facet in dataset["inputFacets"].items():
        validate(facet, classes[key])


def validate_output_facets(dataset: dict[str, typing.Any]) -> None:
    from openlineage.client.facet_v2 import output_statistics_output_dataset

    assert set(dataset["outputFacets"]) == {"outputStatistics"}
    validate(dataset["outputFacets"]["outputStatistics"], output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet)


def as_json(value: typing.Any) -> typing.Any:
    from openlineage.client.serde import Serde

    if isinstance(value, list):
        return [as_json(item) for item in value]
    return json.loads(Serde.to_json(value))


def without_producer(facet: dict[str, typing.Any]) -> dict[str, typing.Any]:
    """The facet without ``_producer``, which names the OpenLineage client or provider release."""
    assert isinstance(facet["_producer"], str) and facet["_producer"]
    return {key: value for key, value in facet.items() if key != "_producer"}


ASSERTIONS_URL = "https://openlineage.io/spec/facets/1-1-0/DataQualityAssertionsDatasetFacet.json#/$defs/DataQualityAssertionsDatasetFacet"
METRICS_URL = "https://openlineage.io/spec/facets/1-0-3/DataQualityMetricsInputDatasetFacet.json#/$defs/DataQualityMetricsInputDatasetFacet"
STATISTICS_URL = "https://openlineage.io/spec/facets/1-0-2/OutputStatisticsOutputDatasetFacet.json#/$defs/OutputStatisticsOutputDatasetFacet"


def run_block(session, df, rules):
    """A real summary of ``rules`` over ``df``, and the block's checks, as the tasks have them."""
    from airflow_provider_cola._rules import load_rules
    from cola_core import Cola
    from cola_core.report.results import summarise

    block = load_rules(rules)
    return summarise(Cola().run(df, rules)), block.checks

#!/usr/bin/env python3
"""Checks the public OpenAPI document (the gateway's openapi.yaml, docs/api/openapi.yaml).

* Every operation's JSON request body and every JSON response (`application/json`, `application/problem+json`,
  any other `+json`) carries an `example` or `examples` on its media type (a response or body taken from
  `components` by `$ref` carries it there).
* Every schema is a valid JSON Schema (Draft 2020-12), and every example — of a media type, a parameter, a
  header, or a schema's own `examples` — is valid against its schema with jsonschema's Draft 2020-12 validator,
  `#/components/...` references resolved over the whole document, formats such as `date-time` and `uuid` checked.
* Every operation has an `operationId`, and no two share one.

Prints a summary and each failure with the JSON pointer of its spot; exits 1 on any failure.

  python3 scripts/openapi-check.py [path/to/openapi.yaml]

Needs PyYAML and jsonschema 4.18 or later (`pip install pyyaml jsonschema`).
"""
import os
import sys

try:
    import yaml
except ImportError:
    sys.exit("openapi-check: PyYAML is missing (pip install pyyaml)")
try:
    import jsonschema
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012
except ImportError:
    sys.exit("openapi-check: jsonschema 4.18 or later is missing (pip install jsonschema)")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = os.path.join(ROOT, "Services", "Gateway", "Sources", "GatewayService", "openapi.yaml")
# The document's URI in the registry: `{"$ref": BASE + "#/…"}` validates against any schema in it, and the
# `#/components/...` references inside resolve against the whole document.
BASE = "urn:lantern:openapi"
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
Validator = jsonschema.Draft202012Validator

# Keywords whose value is a schema, a list of schemas, or a map of schemas (Draft 2020-12).
SCHEMA_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
              "unevaluatedItems", "unevaluatedProperties", "contentSchema")
SCHEMA_LIST = ("allOf", "anyOf", "oneOf", "prefixItems")
SCHEMA_MAP = ("properties", "patternProperties", "$defs", "dependentSchemas")


def escape(token):
    return str(token).replace("~", "~0").replace("/", "~1")


def pointer(*tokens):
    return "#/" + "/".join(escape(t) for t in tokens)


def inside(error):
    """The JSON pointer suffix of where in the instance a jsonschema error is."""
    return "".join(f"/{escape(p)}" for p in error.absolute_path)


def is_json(media_type):
    bare = media_type.split(";")[0].strip().lower()
    return bare == "application/json" or bare.endswith("+json")


class Checker:
    def __init__(self, document):
        self.document = document
        resource = Resource.from_contents(document, default_specification=DRAFT202012)
        self.registry = Registry().with_resource(BASE, resource)
        self.meta = Validator(Validator.META_SCHEMA)
        self.failures = {}      # pointer → message (a spot reached from several operations is reported once)
        self.schemas = set()    # pointers of the schemas checked
        self.validated = set()  # (schema pointer, example pointer) pairs validated
        self.bodies = set()     # pointers of the JSON bodies that need an example
        self.operations = 0
        self.operation_ids = {}

    def fail(self, where, message):
        self.failures.setdefault(where, message)

    def resolve(self, node, where):
        """(the pointer of what `node` is, the node) after following `$ref`s within the document; None if it cannot."""
        seen = []
        while isinstance(node, dict) and "$ref" in node:
            ref = node["$ref"]
            if not isinstance(ref, str) or not ref.startswith("#/") or ref in seen:
                self.fail(where, f"cannot follow $ref {ref!r}")
                return where, None
            seen.append(ref)
            node = self.document
            try:
                for token in ref[2:].split("/"):
                    token = token.replace("~1", "/").replace("~0", "~")
                    node = node[int(token)] if isinstance(node, list) else node[token]
            except (KeyError, IndexError, ValueError, TypeError):
                self.fail(where, f"$ref {ref!r} names nothing in the document")
                return where, None
            where = ref
        return where, node

    def validate(self, schema_at, value, where):
        """`value` (at pointer `where`) against the schema at pointer `schema_at`."""
        if (schema_at, where) in self.validated:
            return
        self.validated.add((schema_at, where))
        validator = Validator({"$ref": BASE + schema_at}, registry=self.registry,
                              format_checker=Validator.FORMAT_CHECKER)
        for error in sorted(validator.iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path]):
            self.fail(where + inside(error), f"does not match {schema_at}: {error.message[:300]}")

    def check_schema(self, schema, where):
        """A schema: valid Draft 2020-12, and its own examples (at any depth) valid against it."""
        if where in self.schemas:
            return
        self.schemas.add(where)
        for error in self.meta.iter_errors(schema):
            self.fail(where + inside(error), f"not a valid JSON Schema (Draft 2020-12): {error.message[:300]}")
        self.check_schema_examples(schema, where)

    def check_schema_examples(self, schema, where):
        if not isinstance(schema, dict):
            return
        if isinstance(schema.get("examples"), list):
            for i, value in enumerate(schema["examples"]):
                self.validate(where, value, f"{where}/examples/{i}")
        if "example" in schema:
            self.validate(where, schema["example"], where + "/example")
        for key in SCHEMA_ONE:
            if isinstance(schema.get(key), dict):
                self.check_schema_examples(schema[key], f"{where}/{escape(key)}")
        for key in SCHEMA_LIST:
            for i, sub in enumerate(schema.get(key) or []):
                self.check_schema_examples(sub, f"{where}/{escape(key)}/{i}")
        for key in SCHEMA_MAP:
            for name, sub in (schema.get(key) or {}).items():
                self.check_schema_examples(sub, f"{where}/{escape(key)}/{escape(name)}")

    def check_examples(self, holder, where, schema_at):
        """The `example`, or the Example Objects of `examples`, of a media type, a parameter or a header."""
        if "example" in holder and "examples" in holder:
            self.fail(where, "has both `example` and `examples`")
        if "example" in holder and schema_at:
            self.validate(schema_at, holder["example"], where + "/example")
        for name, example in (holder.get("examples") or {}).items():
            at, example = self.resolve(example, f"{where}/examples/{escape(name)}")
            if example is None:
                continue
            if not isinstance(example, dict) or ("value" not in example and "externalValue" not in example):
                self.fail(at, "an Example Object needs `value` (or `externalValue`)")
            elif "value" in example and schema_at:
                self.validate(schema_at, example["value"], at + "/value")

    def check_content(self, content, where, what, need_example=True):
        for media_type, media in (content or {}).items():
            at = f"{where}/content/{escape(media_type)}"
            schema_at = at + "/schema" if "schema" in media else None
            if schema_at:
                self.check_schema(media["schema"], schema_at)
            if is_json(media_type):
                if not schema_at:
                    self.fail(at, f"{what} has no schema")
                if need_example:
                    self.bodies.add(at)
                    if "example" not in media and not media.get("examples"):
                        self.fail(at, f"{what} has no example")
            self.check_examples(media, at, schema_at)

    def check_parameter(self, parameter, where):
        at, parameter = self.resolve(parameter, where)
        if parameter is None:
            return
        if "schema" in parameter:
            self.check_schema(parameter["schema"], at + "/schema")
            self.check_examples(parameter, at, at + "/schema")
        self.check_content(parameter.get("content"), at, "parameter", need_example=False)

    def check_header(self, header, where):
        at, header = self.resolve(header, where)
        if header is None:
            return
        if "schema" in header:
            self.check_schema(header["schema"], at + "/schema")
            self.check_examples(header, at, at + "/schema")
        self.check_content(header.get("content"), at, "header", need_example=False)

    def check_response(self, response, where, what):
        at, response = self.resolve(response, where)
        if response is None:
            return
        for name, header in (response.get("headers") or {}).items():
            self.check_header(header, f"{at}/headers/{escape(name)}")
        self.check_content(response.get("content"), at, what)

    def check_operation(self, path, method, operation):
        self.operations += 1
        at = pointer("paths", path, method)
        label = f"{method.upper()} {path}"
        if operation.get("operationId"):
            self.operation_ids.setdefault(operation["operationId"], []).append(at)
        else:
            self.fail(at, "has no operationId")
        for i, parameter in enumerate(operation.get("parameters") or []):
            self.check_parameter(parameter, f"{at}/parameters/{i}")
        if "requestBody" in operation:
            body_at, body = self.resolve(operation["requestBody"], at + "/requestBody")
            if body is not None:
                self.check_content(body.get("content"), body_at, f"the request body of {label}")
        for status, response in (operation.get("responses") or {}).items():
            self.check_response(response, f"{at}/responses/{escape(status)}", f"response {status} of {label}")

    def run(self):
        for path, item in (self.document.get("paths") or {}).items():
            for i, parameter in enumerate(item.get("parameters") or []):
                self.check_parameter(parameter, f"{pointer('paths', path)}/parameters/{i}")
            for method in METHODS:
                if method in item:
                    self.check_operation(path, method, item[method])
        for op_id, places in self.operation_ids.items():
            for place in places[1:]:
                self.fail(place, f"operationId {op_id!r} is also that of {places[0]}")
        # Components are checked even when no operation uses them.
        components = self.document.get("components") or {}
        for name, schema in (components.get("schemas") or {}).items():
            self.check_schema(schema, pointer("components", "schemas", name))
        for name in components.get("responses") or {}:
            self.check_response({"$ref": pointer("components", "responses", name)}, "", f"response {name}")
        for name in components.get("requestBodies") or {}:
            at, body = self.resolve({"$ref": pointer("components", "requestBodies", name)}, "")
            self.check_content(body.get("content"), at, f"request body {name}")
        for name in components.get("parameters") or {}:
            self.check_parameter({"$ref": pointer("components", "parameters", name)}, "")
        for name in components.get("headers") or {}:
            self.check_header({"$ref": pointer("components", "headers", name)}, "")


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else DEFAULT
    try:
        with open(path, encoding="utf-8") as f:
            document = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as error:
        sys.exit(f"openapi-check: cannot read {path}: {error}")
    checker = Checker(document)
    checker.run()
    shown = os.path.relpath(path)
    print(f"openapi-check: {path if shown.startswith('..') else shown}: {checker.operations} operations "
          f"({len(checker.operation_ids)} operationIds), {len(checker.bodies)} JSON bodies with examples to check, "
          f"{len(checker.schemas)} schemas, {len(checker.validated)} examples validated (JSON Schema Draft 2020-12)")
    for where, message in checker.failures.items():
        print(f"  FAIL {where}: {message}")
    if checker.failures:
        print(f"openapi-check: {len(checker.failures)} failure(s)")
        return 1
    print("openapi-check: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())

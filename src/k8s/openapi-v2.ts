/**
 * @module
 * An OpenAPI v2 document with no definitions, which kubectl reads as "no schema known" and so
 * skips client-side schema validation (kubectl `pkg/util/validation`): the relay answers it for an
 * upstream that publishes no v2, the simulator for its own v2 (it publishes its schemas in v3).
 */

/** kube-openapi's protobuf media type, with the `.` spelling Go's mime parser accepts in a Content-Type. */
export const OPENAPI_V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/** The empty document: zero bytes of protobuf (an empty message), or this JSON, with why it is empty as its title. */
export const emptyOpenApiV2Json = (title: string): string => `${JSON.stringify({ swagger: "2.0", info: { title, version: "unversioned" }, paths: {} })}\n`;

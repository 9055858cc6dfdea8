/**
 * @module
 * Failures the simulator raises while handling a request, carried as the `Status` the API
 * server would send. Builders that the relay never needs (write conflicts, invalid objects,
 * unreadable request bodies) live here rather than in `src/k8s/status.ts`.
 */
import { failure } from "../k8s/status.ts";
import type { Status } from "../k8s/types.ts";

/** Thrown by handlers; the server turns it into an HTTP response with `status.code`. */
export class ApiError extends Error {
  readonly status: Status;

  constructor(status: Status) {
    super(status.message);
    this.name = "ApiError";
    this.status = status;
  }
}

const qualified = (resource: string, group: string): string => (group ? `${resource}.${group}` : resource);

const objectDetails = (resource: string, group: string, name: string) => (group ? { name, group, kind: resource } : { name, kind: resource });

/** `pods "x" already exists` (apierrors `NewAlreadyExists`). */
export const alreadyExists = (resource: string, group: string, name: string): Status =>
  failure(409, "AlreadyExists", `${qualified(resource, group)} "${name}" already exists`, objectDetails(resource, group, name));

/** Optimistic-concurrency failure (apierrors `NewConflict` with the registry's wording). */
export const conflict = (resource: string, group: string, name: string): Status =>
  failure(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${qualified(resource, group)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    objectDetails(resource, group, name),
  );

/** `Deployment.apps "x" is invalid: metadata.name: Required value: ...` (apierrors `NewInvalid`, one cause). */
export function invalid(kind: string, group: string, name: string, field: string, reason: string, detail: string): Status {
  const details = { ...(name ? { name } : {}), ...(group ? { group } : {}), kind, causes: [{ reason, message: detail, field }] };
  return failure(422, "Invalid", `${qualified(kind, group)} "${name}" is invalid: ${field}: ${detail}`, details);
}

/** go-restful's answer for a path no route serves. */
export const pathNotFound = (): Status => failure(404, "NotFound", "the server could not find the requested resource", {});

/** A body in a format the simulator does not read (apply-patch YAML, protobuf). */
export const unsupportedMediaType = (accepted: readonly string[]): Status =>
  failure(415, "UnsupportedMediaType", `the body of the request was in an unknown format - accepted media types include: ${accepted.join(", ")}`);

// Turns JSON-schema validation failures into messages that name the field and the rule.

interface SchemaError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

function fieldPath(instancePath: string, context: string): string {
  const parts = instancePath.split('/').filter(Boolean);
  let path = '';
  for (const part of parts) {
    path += /^\d+$/.test(part) ? `[${part}]` : path ? `.${part}` : part;
  }
  return path || (context === 'body' ? 'body' : context);
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

export function describeValidationError(error: SchemaError, context: string): string {
  const field = fieldPath(error.instancePath, context);
  const p = error.params;
  switch (error.keyword) {
    case 'required': {
      const missing = String(p.missingProperty);
      return `${field === 'body' || field === context ? missing : `${field}.${missing}`} is required`;
    }
    case 'type': {
      const type = String(p.type).replace(',', ' or ');
      if (field === 'body') return 'body must be a JSON object';
      // A query parameter is text; one that is not was given more than once (?a=1&a=2 arrives as a list).
      if (context === 'querystring' && type === 'string') return `${field} must be given once`;
      return `${field} must be ${article(type === 'object' ? 'object' : type === 'array' ? 'array' : type)}`;
    }
    case 'enum':
      return `${field} must be one of: ${(p.allowedValues as unknown[]).join(', ')}`;
    case 'minimum':
      return `${field} must be at least ${String(p.limit)}`;
    case 'maximum':
      return `${field} must be at most ${String(p.limit)}`;
    case 'minLength':
      return Number(p.limit) === 1 ? `${field} must not be empty` : `${field} must be at least ${String(p.limit)} characters`;
    case 'maxLength':
      return `${field} must be at most ${String(p.limit)} characters`;
    case 'minItems':
      return `${field} must have at least ${String(p.limit)} item${Number(p.limit) === 1 ? '' : 's'}`;
    case 'maxItems':
      return `${field} must have at most ${String(p.limit)} items`;
    case 'uniqueItems':
      return `${field} must not contain duplicates`;
    case 'pattern':
      return `${field} has an invalid format`;
    case 'additionalProperties':
      return `${field} has no field "${String(p.additionalProperty)}"`;
    case 'anyOf':
    case 'oneOf':
      return `${field} has an invalid shape`;
    default:
      return `${field} ${error.message ?? 'is invalid'}`;
  }
}

/* global window */
// Renders /v1/openapi.json from this origin. "Try it out" sends real requests through the same
// ingress, so it stays off until the reader turns it on per operation.
window.SwaggerUIBundle({
  url: '/v1/openapi.json',
  dom_id: '#reference',
  deepLinking: true,
  displayOperationId: true,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
  tryItOutEnabled: false,
  validatorUrl: null,
  presets: [window.SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});

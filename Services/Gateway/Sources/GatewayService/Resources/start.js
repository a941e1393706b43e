// The reference of the document this gateway serves (/openapi.yaml), with "Try it out" against this gateway. Sign in
// with Authorize: paste an access token (`make token APP=pairly NAME=Ada` on the local stack prints one).
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/openapi.yaml",
    dom_id: "#reference",
    deepLinking: true,
    persistAuthorization: true,
    tryItOutEnabled: false,
    displayRequestDuration: true,
    defaultModelsExpandDepth: 0,
  });
});

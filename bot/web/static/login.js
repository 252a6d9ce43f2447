// Spends the one-time link as soon as a person (not a link preview) opens it.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var form = document.getElementById("login");
  if (form) { form.submit(); }
});

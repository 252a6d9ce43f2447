// Telegram Mini App: send the initData Telegram put in the address to be checked, then go in.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var hash = new URLSearchParams(window.location.hash.slice(1));
  var initData = hash.get("tgWebAppData") || "";
  var problem = document.getElementById("tg-problem");
  if (!initData) { problem.hidden = false; return; }
  fetch("/auth/telegram", {
    method: "POST",
    credentials: "same-origin",
    headers: {"Content-Type": "application/x-www-form-urlencoded"},
    body: new URLSearchParams({init_data: initData}).toString()
  }).then(function (response) {
    if (response.ok) { window.location.replace("/"); } else { problem.hidden = false; }
  }, function () { problem.hidden = false; });
});

// Live updates of the pending cards: the server says, as server-sent
// events, when the cards this person may see change; the list is then
// fetched again. Without this script the page works as plain forms.
(function () {
  "use strict";
  var list = document.getElementById("cards");
  if (!list || !window.EventSource) { return; }
  // seen: what the list draws; the server speaks only of a change to it.
  var src = new EventSource("/events?seen=" + encodeURIComponent(list.getAttribute("data-seen") || ""));
  function refresh() {
    // Keep what is being typed: wait while a field of the list has focus.
    if (list.contains(document.activeElement) && document.activeElement.tagName !== "BUTTON") {
      setTimeout(refresh, 2000);
      return;
    }
    fetch(list.getAttribute("data-live"), { credentials: "same-origin" })
      .then(function (r) { return r.text(); })
      .then(function (html) { list.innerHTML = html; })
      .catch(function () {});
  }
  src.addEventListener("cards", refresh);
  src.addEventListener("ended", function () { src.close(); location.reload(); });
})();

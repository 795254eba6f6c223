import "./base.css";
